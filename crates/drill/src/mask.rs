//! Event masks as scripts write them (`EPOLLIN|EPOLLOUT`, `POLLIN|POLLOUT`,
//! or a number): parsing and naming, over one (name, bit) table per call.

use crate::ast::Expr;

/// The bits of `e`: a number, a name in `table` or names or'ed together.
/// `prefix` ("EPOLL", "POLL") names the call in errors.
pub(crate) fn parse(e: &Expr, table: &[(&str, u32)], prefix: &str) -> Result<u32, String> {
    let call = prefix.to_lowercase();
    match e {
        Expr::Int(n) => {
            u32::try_from(*n).map_err(|_| format!("{call} event mask {n} out of range"))
        }
        Expr::Ident(name) => table
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, b)| b)
            .ok_or_else(|| {
                let known: Vec<&str> = table.iter().map(|&(n, _)| n).collect();
                format!(
                    "{call} event {name} is not supported ({} are)",
                    known.join(", ")
                )
            }),
        Expr::Or(parts) => parts
            .iter()
            .try_fold(0, |acc, p| Ok(acc | parse(p, table, prefix)?)),
        _ => Err(format!("expected events like {prefix}IN|{prefix}OUT")),
    }
}

/// `A|B` for the bits of `m` that `table` names, for messages; "0" for none.
pub(crate) fn name(m: u32, table: &[(&str, u32)]) -> String {
    let v: Vec<&str> = table
        .iter()
        .filter(|&&(_, b)| m & b != 0)
        .map(|&(n, _)| n)
        .collect();
    if v.is_empty() {
        "0".into()
    } else {
        v.join("|")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[(&str, u32)] = &[("XIN", 1), ("XOUT", 4)];

    #[test]
    fn masks_parse_and_name_both_ways() {
        let or = Expr::Or(vec![Expr::Ident("XIN".into()), Expr::Ident("XOUT".into())]);
        assert_eq!(parse(&or, T, "X"), Ok(5));
        assert_eq!(parse(&Expr::Int(4), T, "X"), Ok(4));
        assert_eq!(name(5, T), "XIN|XOUT");
        assert_eq!(name(0, T), "0");
        let e = parse(&Expr::Ident("XPRI".into()), T, "X").unwrap_err();
        assert!(
            e.contains("x event XPRI is not supported (XIN, XOUT are)"),
            "{e}"
        );
        assert!(parse(&Expr::Int(-1), T, "X")
            .unwrap_err()
            .contains("out of range"));
    }
}
