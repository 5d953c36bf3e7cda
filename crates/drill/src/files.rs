//! Regular files a script makes with its shell lines and reads with
//! `open()` and `sendfile()` (sendfile(2)). The runner runs no shell
//! command, so the two commands upstream scripts use to make a file are
//! modelled: `rm -f PATH` and `dd if=/dev/zero of=PATH bs=B count=N` (a
//! file of zeroes, the only payload packetdrill checks). Files live in
//! memory as lengths: their bytes are all zero.

use crate::ast::{Expr, SyscallSpec};
use crate::report::FailKind;
use crate::runner::{Res, Runner};
use crate::syscall::Outcome;
use std::collections::BTreeMap;

/// The largest file a `dd` line may make: scripts send a few kilobytes,
/// and the runner hands a file's bytes to the engine in one write.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;

/// Files made by the script's shell lines, and the ones it opened.
#[derive(Debug, Default)]
pub(crate) struct Files {
    /// Path -> length in bytes (the contents are zeroes).
    made: BTreeMap<String, u64>,
    /// Script fd -> (path, file position).
    open: BTreeMap<i64, (String, u64)>,
}

/// What `apply_command` made of a shell command.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct FileCommands {
    /// The command without the lines modelled here, for the sysctl reader.
    pub rest: String,
    /// The lines modelled, for the report's notes.
    pub modelled: Vec<String>,
    /// A line that looked like ours but could not be read.
    pub error: Option<String>,
}

impl Files {
    /// Models the `rm -f` and `dd` lines of a backtick command.
    pub(crate) fn apply_command(&mut self, cmd: &str) -> FileCommands {
        let mut out = FileCommands::default();
        let mut rest = Vec::new();
        for line in cmd.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let prog = words.first().map(|w| w.rsplit('/').next().unwrap_or(w));
            match prog {
                Some("rm") if words.len() == 3 && words[1] == "-f" => {
                    self.made.remove(words[2]);
                    out.modelled.push(format!("rm -f {}", words[2]));
                }
                Some("dd") => match dd_zero_file(&words[1..]) {
                    Ok((path, len)) => {
                        out.modelled
                            .push(format!("dd: {path} holds {len} zero bytes"));
                        self.made.insert(path, len);
                    }
                    Err(e) => out.error = Some(format!("`{}`: {e}", line.trim())),
                },
                _ => rest.push(line),
            }
        }
        // The other lines as the sysctl reader and the report saw them
        // before: line breaks read as spaces.
        out.rest = rest.join(" ");
        out
    }

    /// The length of file `path`, if the script made it.
    fn len_of(&self, path: &str) -> Option<u64> {
        self.made.get(path).copied()
    }
}

/// Reads `dd`'s operands: `if=/dev/zero of=PATH` with `bs` and `count`
/// (dd's defaults: 512-byte blocks, copy until the input ends, which
/// /dev/zero never does). Returns the path and the file's length.
fn dd_zero_file(args: &[&str]) -> Result<(String, u64), String> {
    let (mut input, mut output, mut bs, mut count) = (None, None, 512u64, None);
    for a in args {
        let Some((k, v)) = a.split_once('=') else {
            return Err(format!("operand {a:?} is not KEY=VALUE"));
        };
        let num = || {
            v.parse::<u64>()
                .map_err(|_| format!("{k}={v}: expected a whole number of bytes"))
        };
        match k {
            "if" => input = Some(v),
            "of" => output = Some(v),
            "bs" => bs = num()?,
            "count" => count = Some(num()?),
            "status" => {}
            _ => {
                return Err(format!(
                    "operand {k}= is not modelled (if, of, bs, count, status are)"
                ))
            }
        }
    }
    if input != Some("/dev/zero") {
        return Err("only if=/dev/zero is modelled (packetdrill's payloads are zeroes)".into());
    }
    let path = output.ok_or("no of=PATH")?;
    let count = count.ok_or("no count=N (dd would copy /dev/zero forever)")?;
    let len = bs
        .checked_mul(count)
        .filter(|&n| n <= MAX_FILE_BYTES)
        .ok_or_else(|| format!("bs x count is over {} MiB", MAX_FILE_BYTES >> 20))?;
    Ok((path.to_string(), len))
}

impl Runner<'_> {
    /// `open()`, `sendfile()`, and `close()` of a file descriptor from open().
    /// None when the call is not one of these.
    pub(crate) fn try_file_call(&mut self, idx: usize, spec: &SyscallSpec) -> Option<Res<Outcome>> {
        match spec.name.as_str() {
            "open" => Some(self.open_file(idx, spec)),
            "sendfile" => Some(self.sendfile(idx, spec)),
            "close" => {
                let fd = spec.args.first().and_then(int_arg)?;
                self.files.open.remove(&fd)?;
                Some(Ok(Outcome::Done(Ok(0))))
            }
            _ => None,
        }
    }

    /// open(2) read-only: the file descriptor is the script's (packetdrill
    /// maps script fds to live ones); a file no shell line made is ENOENT.
    fn open_file(&mut self, idx: usize, spec: &SyscallSpec) -> Res<Outcome> {
        let Some(Expr::Str(path)) = spec.args.first() else {
            return Err(self.fail(
                idx,
                FailKind::Unsupported,
                "open: the path must be a string",
            ));
        };
        let flags = spec.args.get(1);
        if !matches!(flags, Some(Expr::Ident(f)) if f == "O_RDONLY") {
            return Err(self.fail(
                idx,
                FailKind::Unsupported,
                "open: only O_RDONLY is modelled (files are read by sendfile)",
            ));
        }
        if self.files.len_of(path).is_none() {
            self.errno_reason = Some(format!(
                "open: no shell line of the script made {path} (rm -f and dd are modelled)"
            ));
            return Ok(Outcome::Done(Err("ENOENT")));
        }
        if spec.ret < 0 {
            return Err(self.fail(
                idx,
                FailKind::Unsupported,
                "open: expected to fail, but the file exists",
            ));
        }
        if self.socks.contains_key(&spec.ret) || self.files.open.contains_key(&spec.ret) {
            return Err(self.fail(
                idx,
                FailKind::Unsupported,
                format!("open: fd {} is already in use", spec.ret),
            ));
        }
        self.files.open.insert(spec.ret, (path.clone(), 0));
        Ok(Outcome::Done(Ok(spec.ret)))
    }

    /// sendfile(out_fd, in_fd, offset, count): up to `count` bytes of the
    /// file from `*offset` (the file position stays), or from the file
    /// position when `offset` is NULL (then it advances), written to the
    /// socket as write(2) would.
    fn sendfile(&mut self, idx: usize, spec: &SyscallSpec) -> Res<Outcome> {
        let bad = |r: &Self, m: &str| r.fail(idx, FailKind::Unsupported, format!("sendfile: {m}"));
        let out_fd = spec
            .args
            .first()
            .and_then(int_arg)
            .ok_or_else(|| bad(self, "out_fd must be a number"))?;
        let in_fd = spec
            .args
            .get(1)
            .and_then(int_arg)
            .ok_or_else(|| bad(self, "in_fd must be a number"))?;
        let count = spec
            .args
            .get(3)
            .and_then(int_arg)
            .ok_or_else(|| bad(self, "count must be a number"))?;
        let offset = match spec.args.get(2) {
            Some(Expr::Ident(n)) if n == "NULL" => None,
            Some(Expr::List(l)) if l.len() == 1 => {
                Some(int_arg(&l[0]).ok_or_else(|| bad(self, "offset must be [N] or NULL"))?)
            }
            _ => return Err(bad(self, "offset must be [N] or NULL")),
        };
        let Some((path, pos)) = self.files.open.get(&in_fd).cloned() else {
            return Ok(Outcome::Done(Err("EBADF")));
        };
        let Some(sock) = self.socks.get(&out_fd).cloned() else {
            return Ok(Outcome::Done(Err("EBADF")));
        };
        let (Ok(count), Ok(from)) = (
            u64::try_from(count),
            u64::try_from(offset.unwrap_or(pos as i64)),
        ) else {
            return Ok(Outcome::Done(Err("EINVAL")));
        };
        let len = self.files.len_of(&path).unwrap_or(0);
        let n = count.min(len.saturating_sub(from));
        let out = self.write(out_fd, &sock, n as usize, false, false)?;
        if let Outcome::Done(Ok(k)) = out {
            self.sent_ext(k as usize);
        }
        if let (None, Outcome::Done(Ok(k))) = (offset, &out) {
            if let Some(f) = self.files.open.get_mut(&in_fd) {
                f.1 = pos + *k as u64;
            }
        }
        Ok(out)
    }
}

/// A number argument: `N` or `[N]`.
fn int_arg(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::List(l) if l.len() == 1 => int_arg(&l[0]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rm_and_dd_lines_make_files_and_leave_the_rest() {
        let mut f = Files::default();
        let c = f.apply_command(
            "../../common/defaults.sh\n/bin/rm -f /tmp/t\n/bin/dd bs=1 count=5 if=/dev/zero of=/tmp/t status=none\n",
        );
        assert_eq!(c.rest, "../../common/defaults.sh");
        assert_eq!(c.modelled.len(), 2);
        assert_eq!(c.error, None);
        assert_eq!(f.len_of("/tmp/t"), Some(5));
        f.apply_command("rm -f /tmp/t");
        assert_eq!(f.len_of("/tmp/t"), None);
    }

    #[test]
    fn dd_lines_that_are_not_a_file_of_zeroes_are_errors() {
        let mut f = Files::default();
        for bad in [
            "dd if=/dev/urandom of=/tmp/x bs=1 count=5",
            "dd if=/dev/zero of=/tmp/x bs=1",
            "dd if=/dev/zero of=/tmp/x bs=1G count=1000",
            "dd if=/dev/zero of=/tmp/x bs=1048576 count=100000",
            "dd if=/dev/zero bs=1 count=1",
        ] {
            let c = f.apply_command(bad);
            assert!(c.error.is_some(), "{bad}");
        }
        assert_eq!(f.len_of("/tmp/x"), None);
    }
}
