//! Network namespaces for real-kernel runs: made with `ip netns add` under a
//! name unique to this process (so parallel tests never collide), deleted
//! when the guard drops (also when a test panics); veth pairs between them;
//! a closure run by a thread that entered one (setns(2) changes only the
//! calling thread); a process run under `ip netns exec`.
//!
//! Everything here needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and the
//! `ip` command (iproute2); [`unavailable`] says why a machine cannot.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;

/// Runs a command to completion; its stdout, or an error with its stderr.
pub fn run_cmd(args: &[&str]) -> io::Result<String> {
    let (program, rest) = args
        .split_first()
        .ok_or_else(|| io::Error::other("run_cmd: no command given"))?;
    let out = Command::new(program)
        .args(rest)
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run `{}`: {e}", args.join(" "))))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(io::Error::other(format!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Why this machine cannot make namespaces with a TUN device in them, if it
/// cannot: not root, no /dev/net/tun, no `ip`, or `ip netns add` refused.
/// Probed once per process (parallel tests must not race on the probe).
pub fn unavailable() -> Option<String> {
    static WHY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    WHY.get_or_init(probe).clone()
}

fn probe() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not running as root: network namespaces need root".into());
    }
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
    {
        return Some(format!("cannot open /dev/net/tun: {e}"));
    }
    let probe = format!("tgprobe{}", std::process::id());
    match Command::new("ip")
        .args(["netns", "add", &probe])
        .stderr(Stdio::null())
        .status()
    {
        Err(e) => return Some(format!("cannot run `ip` (iproute2): {e}")),
        Ok(s) if !s.success() => {
            return Some("cannot create a network namespace (`ip netns add` failed)".into())
        }
        Ok(_) => {}
    }
    let _ = Command::new("ip")
        .args(["netns", "del", &probe])
        .stderr(Stdio::null())
        .status();
    None
}

/// A network namespace: made by [`Netns::new`] (and deleted on drop), or one
/// the user made, borrowed with [`Netns::existing`] (left alone on drop).
#[derive(Debug)]
pub struct Netns {
    name: String,
    owned: bool,
}

impl Netns {
    /// Makes `tg{tag}{pid}x{n}` with its loopback up. Keep `tag` short: the
    /// name is also a file under /var/run/netns.
    pub fn new(tag: &str) -> io::Result<Netns> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "tg{tag}{}x{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        run_cmd(&["ip", "netns", "add", &name])?;
        let ns = Netns { name, owned: true };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// A namespace that already exists (`ip netns add NAME` by the user); not
    /// deleted on drop.
    pub fn existing(name: &str) -> io::Result<Netns> {
        if name.is_empty() || name.contains(['/', '\0']) || name == "." || name == ".." {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad namespace name {name:?}"),
            ));
        }
        let path = Self::path_of(name);
        if !std::path::Path::new(&path).exists() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no network namespace {name:?} ({path} does not exist; make it with `ip netns add {name}`)"),
            ));
        }
        Ok(Netns {
            name: name.to_string(),
            owned: false,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn path_of(name: &str) -> String {
        format!("/var/run/netns/{name}")
    }

    /// `ip -n NAME ARGS...`.
    pub fn ip(&self, args: &[&str]) -> io::Result<String> {
        let mut v = vec!["ip", "-n", &self.name];
        v.extend_from_slice(args);
        run_cmd(&v)
    }

    /// `ip netns exec NAME ARGS...`, run to completion.
    pub fn exec(&self, args: &[&str]) -> io::Result<String> {
        let mut v = vec!["ip", "netns", "exec", &self.name];
        v.extend_from_slice(args);
        run_cmd(&v)
    }

    /// A [`Command`] that runs `program` in this namespace, for the caller to
    /// add arguments to and spawn: the child enters it (setns) between fork
    /// and exec, so its pid is the program's own (signals reach it), unlike
    /// `ip netns exec`'s wrapper in some versions.
    pub fn command(&self, program: &str) -> Command {
        use std::os::unix::process::CommandExt;
        let mut c = Command::new(program);
        let path = std::ffi::CString::new(Self::path_of(&self.name))
            .expect("namespace names hold no NUL (checked when made)");
        // SAFETY: the closure only makes system calls (open, setns, close),
        // which are async-signal-safe, on memory prepared before the fork.
        unsafe {
            c.pre_exec(move || {
                let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                let r = libc::setns(fd, libc::CLONE_NEWNET);
                let e = io::Error::last_os_error();
                libc::close(fd);
                if r != 0 {
                    return Err(e);
                }
                Ok(())
            });
        }
        c
    }

    /// `sysctl -qw KEY=VALUE` in this namespace (net.* keys are per namespace).
    pub fn sysctl(&self, kv: &str) -> io::Result<()> {
        self.exec(&["sysctl", "-qw", kv]).map(|_| ())
    }

    /// `ADDR/PREFIX` on `dev`, MTU `mtu`, link up.
    pub fn addr_up(&self, dev: &str, cidr: &str, mtu: u16) -> io::Result<()> {
        self.ip(&["addr", "add", cidr, "dev", dev])?;
        self.ip(&["link", "set", "dev", dev, "mtu", &mtu.to_string(), "up"])?;
        Ok(())
    }

    /// A veth pair: `dev` in this namespace, `peer_dev` in `peer`'s, both at
    /// MTU `mtu`, both down (see [`addr_up`](Self::addr_up)).
    pub fn add_veth(&self, dev: &str, peer: &Netns, peer_dev: &str, mtu: u16) -> io::Result<()> {
        let mtu = mtu.to_string();
        self.ip(&[
            "link", "add", dev, "mtu", &mtu, "type", "veth", "peer", "name", peer_dev, "mtu", &mtu,
            "netns", &peer.name,
        ])
        .map(|_| ())
    }

    /// Moves `dev` from the caller's namespace (the root one, for a process
    /// that never entered another) into this one.
    pub fn adopt_link(&self, dev: &str) -> io::Result<()> {
        run_cmd(&["ip", "link", "set", "dev", dev, "netns", &self.name]).map(|_| ())
    }

    /// Runs `f` on a new thread that entered this namespace; the thread's
    /// sockets and devices are this namespace's (file descriptors it opens
    /// stay usable from any thread afterwards).
    pub fn spawn<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> JoinHandle<io::Result<T>> {
        in_netns(&self.name, f)
    }

    /// Runs `f` inside this namespace and waits for it (on a scoped thread,
    /// so `f` may borrow).
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        let path = Self::path_of(&self.name);
        std::thread::scope(|s| {
            s.spawn(|| {
                enter_path(&path)?;
                Ok(f())
            })
            .join()
            .map_err(|_| {
                io::Error::other(format!("a thread in namespace {} panicked", self.name))
            })?
        })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if self.owned {
            let _ = Command::new("ip")
                .args(["netns", "del", &self.name])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// Moves the calling thread into namespace `ns` (by name), for the rest of
/// its life: its new sockets and devices are that namespace's.
pub fn enter(ns: &str) -> io::Result<()> {
    enter_path(&Netns::path_of(ns))
}

/// setns(2) into the namespace at `path` (CLONE_NEWNET: this thread only).
fn enter_path(path: &str) -> io::Result<()> {
    let file =
        File::open(path).map_err(|e| io::Error::new(e.kind(), format!("open {path}: {e}")))?;
    // SAFETY: a valid namespace fd; CLONE_NEWNET changes only this thread.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("setns {path}: {e}")));
    }
    Ok(())
}

/// Runs `f` on a new thread that entered namespace `ns` (by name); an error
/// if the thread could not enter it.
pub fn in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<io::Result<T>> {
    let path = Netns::path_of(ns);
    std::thread::spawn(move || {
        enter_path(&path)?;
        Ok(f())
    })
}

/// Joins a thread started by [`in_netns`] or [`Netns::spawn`] whose closure
/// returns a `Result<T, String>`: one error for a panic, a failed setns, or
/// the closure's own.
pub fn join<T>(h: JoinHandle<io::Result<Result<T, String>>>, what: &str) -> Result<T, String> {
    h.join()
        .map_err(|_| format!("the {what} thread panicked"))?
        .map_err(|e| format!("the {what} thread: {e}"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_report_what_failed() {
        let e = run_cmd(&["sh", "-c", "echo oops >&2; exit 3"]).unwrap_err();
        assert!(e.to_string().contains("oops"), "{e}");
        assert!(e.to_string().contains("sh -c"), "{e}");
        assert_eq!(run_cmd(&["sh", "-c", "echo hi"]).unwrap(), "hi\n");
        assert!(run_cmd(&[]).is_err());
    }

    #[test]
    fn a_missing_namespace_is_named() {
        let e = Netns::existing("tg-no-such-namespace").unwrap_err();
        assert!(
            e.to_string().contains("ip netns add tg-no-such-namespace"),
            "{e}"
        );
    }

    /// Two namespaces joined by a veth answer each other, and both are gone
    /// after the guards drop.
    #[test]
    fn veth_between_two_namespaces() {
        if let Some(why) = unavailable() {
            assert!(
                std::env::var("TINYGRAM_REAL_WIRE").map_or(true, |v| v != "require"),
                "cannot run and TINYGRAM_REAL_WIRE=require: {why}"
            );
            eprintln!("\nSKIPPED veth_between_two_namespaces: {why}");
            return;
        }
        let (a, b) = (Netns::new("ua").unwrap(), Netns::new("ub").unwrap());
        a.add_veth("tgu0", &b, "tgu1", 1500).unwrap();
        a.addr_up("tgu0", "10.211.0.1/24", 1500).unwrap();
        b.addr_up("tgu1", "10.211.0.2/24", 1500).unwrap();
        let l = b
            .run(|| std::net::TcpListener::bind("10.211.0.2:7"))
            .unwrap()
            .unwrap();
        a.spawn(|| std::net::TcpStream::connect("10.211.0.2:7").map(|_| ()))
            .join()
            .unwrap()
            .unwrap()
            .expect("connect across the veth");
        assert!(l.accept().is_ok());
        let names = [a.name().to_string(), b.name().to_string()];
        drop((a, b));
        let list = run_cmd(&["ip", "netns", "list"]).unwrap();
        for n in names {
            assert!(!list.contains(&n), "{n} still listed: {list}");
        }
    }
}
