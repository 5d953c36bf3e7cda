//! nplab packetdrill's conditional blocks (the syntax of FreeBSD's own
//! scripts, freebsd-net/tcp-testsuite): `#ifdef NAME` ... `#else` ...
//! `#endif`. NAME is defined when it is the operating system the stack
//! stands for (`FreeBSD` under `--stack freebsd`, `Linux` under
//! `--stack linux`), as nplab's packetdrill defines the OS it runs on, or a
//! `-D NAME=...` of the command line. Other names (the suite's `STANDARD`,
//! what a textbook TCP would do) are undefined.

use crate::stack::Stack;

/// The operating-system name nplab packetdrill defines for `stack`, if any.
pub fn os_name(stack: Stack) -> Option<&'static str> {
    let name = stack.profile().name;
    if name.starts_with("freebsd") {
        Some("FreeBSD")
    } else if name.starts_with("linux") {
        Some("Linux")
    } else {
        None
    }
}

/// Keeps the lines of the branches whose condition holds; directive lines
/// and dropped lines become empty, so line numbers stay the script's own.
/// An unbalanced or malformed directive is an error naming its line.
pub fn select_branches(
    text: &str,
    defined: impl Fn(&str) -> bool,
) -> Result<String, (usize, String)> {
    if !text.lines().any(|l| l.trim_start().starts_with('#')) {
        return Ok(text.to_string());
    }
    // Per open block: (line it opened at, this branch kept, an #else seen).
    let mut open: Vec<(usize, bool, bool)> = Vec::new();
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        let mut words = t.split_whitespace();
        let directive = words.next().filter(|w| w.starts_with('#'));
        let outer = open.iter().all(|b| b.1);
        match directive {
            Some(d @ ("#ifdef" | "#ifndef")) => {
                let name = words
                    .next()
                    .ok_or_else(|| (n, format!("{d} needs a name")))?;
                if let Some(extra) = words.next() {
                    return Err((
                        n,
                        format!("{d} {name}: unexpected {extra:?} after the name"),
                    ));
                }
                open.push((n, defined(name) == (d == "#ifdef"), false));
            }
            Some("#else") => match open.last_mut() {
                Some((_, _, true)) => return Err((n, "a second #else in one #ifdef block".into())),
                Some(b) => {
                    b.1 = !b.1;
                    b.2 = true;
                }
                None => return Err((n, "#else without #ifdef".into())),
            },
            Some("#endif") => {
                if open.pop().is_none() {
                    return Err((n, "#endif without #ifdef".into()));
                }
            }
            Some(other) if other.starts_with("#if") || other == "#elif" => {
                return Err((
                    n,
                    format!("{other} is not supported (#ifdef, #ifndef, #else and #endif are)"),
                ));
            }
            _ => {
                if outer {
                    out.push_str(line);
                }
            }
        }
        out.push('\n');
    }
    if let Some((at, _, _)) = open.last() {
        return Err((*at, "#ifdef without #endif".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_branch_for_the_defined_name_and_line_numbers() {
        let text = "a\n#ifdef STANDARD\nb\n#else\nc\n#endif\n#ifdef FreeBSD\nd\n#endif\ne\n";
        let out = select_branches(text, |n| n == "FreeBSD").unwrap();
        assert_eq!(out, "a\n\n\n\nc\n\n\nd\n\ne\n");
        let out = select_branches(text, |n| n == "STANDARD").unwrap();
        assert_eq!(out, "a\n\nb\n\n\n\n\n\n\ne\n");
        // Nested: an inner kept branch under a dropped outer one is dropped.
        let nested = "#ifdef X\n#ifdef Y\ny\n#endif\n#endif\n";
        assert_eq!(select_branches(nested, |n| n == "Y").unwrap(), "\n\n\n\n\n");
    }

    #[test]
    fn names_the_line_of_a_bad_directive() {
        assert_eq!(select_branches("x\n#endif\n", |_| true).unwrap_err().0, 2);
        assert_eq!(select_branches("#ifdef A\nx\n", |_| true).unwrap_err().0, 1);
        assert_eq!(
            select_branches("#ifdef\n#endif\n", |_| true).unwrap_err().0,
            1
        );
        let e = select_branches("#if A\n#endif\n", |_| true).unwrap_err();
        assert!(e.1.contains("not supported"), "{}", e.1);
        assert_eq!(os_name(Stack::linux()), Some("Linux"));
        assert_eq!(os_name("freebsd".parse().unwrap()), Some("FreeBSD"));
        assert_eq!(os_name(Stack::rfc()), None);
    }
}
