//! The TUN device (via tun-rs): opened without packet information (raw IP
//! packets), address and link configured when we may, else the exact `ip`
//! commands to do it by hand are printed. With offloads (the default) each
//! packet carries a virtio-net header (`IFF_VNET_HDR`) and the device
//! advertises checksum offload and TSO (`TUNSETOFFLOAD` with `TUN_F_CSUM |
//! TUN_F_TSO4 | TUN_F_TSO6`): the kernel hands over and takes 64 KB
//! super-packets ([`crate::offload`]).

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};
use tun_rs::{DeviceBuilder, SyncDevice};

/// Where the device sits: its name, the kernel's address on it, tinygram's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceConfig {
    pub name: String,
    /// tinygram's own address (`--addr`).
    pub addr: Ipv4Addr,
    pub prefix: u8,
    /// The kernel's address on the device (`--kernel-addr`, default: see [`default_kernel_addr`]).
    pub kernel_addr: Ipv4Addr,
    pub mtu: u16,
}

/// `10.7.0.2/24` -> (10.7.0.2, 24).
pub fn parse_cidr(s: &str) -> Result<(Ipv4Addr, u8), String> {
    let (a, p) = s
        .split_once('/')
        .ok_or_else(|| format!("bad address {s:?}: expected ADDR/PREFIX, like 10.7.0.2/24"))?;
    let addr: Ipv4Addr = a
        .parse()
        .map_err(|_| format!("bad IPv4 address {a:?} in {s:?}"))?;
    let prefix: u8 = p
        .parse()
        .ok()
        .filter(|p| (8..=30).contains(p))
        .ok_or_else(|| format!("bad prefix length {p:?} in {s:?}: expected 8 to 30"))?;
    Ok((addr, prefix))
}

/// The kernel's side of the link: the first host address of the subnet, or
/// the second when tinygram took the first.
pub fn default_kernel_addr(addr: Ipv4Addr, prefix: u8) -> Ipv4Addr {
    let mask = u32::MAX << (32 - u32::from(prefix));
    let net = u32::from(addr) & mask;
    let first = Ipv4Addr::from(net + 1);
    if first == addr {
        Ipv4Addr::from(net + 2)
    } else {
        first
    }
}

impl DeviceConfig {
    /// The commands that configure the device by hand (as root).
    pub fn ip_commands(&self) -> Vec<String> {
        vec![
            format!("ip tuntap add dev {} mode tun", self.name),
            format!(
                "ip addr add {}/{} dev {}",
                self.kernel_addr, self.prefix, self.name
            ),
            format!("ip link set dev {} mtu {} up", self.name, self.mtu),
        ]
    }
}

/// How to run the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TunOptions {
    /// Virtio-net headers, checksum offload and TSO/GSO both ways (`--no-offload` turns off).
    pub offload: bool,
    /// Wait for packets by spinning on the device instead of sleeping in
    /// ppoll (`--busy-poll`): less latency, one core kept busy.
    pub busy_poll: bool,
}

impl Default for TunOptions {
    fn default() -> Self {
        TunOptions {
            offload: true,
            busy_poll: false,
        }
    }
}

/// An open TUN device.
pub struct Tun {
    dev: SyncDevice,
    /// Whether we configured address and link ourselves.
    pub configured: bool,
    /// Whether frames carry a virtio-net header (offloads on).
    pub vnet_hdr: bool,
    /// Whether waiting spins instead of sleeping.
    pub busy_poll: bool,
}

impl std::fmt::Debug for Tun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tun")
            .field("fd", &self.raw_fd())
            .field("configured", &self.configured)
            .field("vnet_hdr", &self.vnet_hdr)
            .finish()
    }
}

impl Tun {
    /// Opens (creating if needed) and configures the device. When it can open
    /// but not configure the device (a persistent device owned by a
    /// non-root user), it says so on stderr with the commands, and goes on.
    pub fn open(cfg: &DeviceConfig) -> io::Result<Tun> {
        Tun::open_with(cfg, TunOptions::default())
    }

    /// [`open`](Self::open) with offloads and busy-polling as asked.
    pub fn open_with(cfg: &DeviceConfig, opts: TunOptions) -> io::Result<Tun> {
        let full = DeviceBuilder::new()
            .name(&cfg.name)
            .packet_information(false)
            .offload(opts.offload)
            .mtu(cfg.mtu)
            .ipv4(cfg.kernel_addr, cfg.prefix, None)
            .enable(true)
            .build_sync();
        let (dev, configured) = match full {
            Ok(d) => (d, true),
            Err(first) => {
                let plain = DeviceBuilder::new()
                    .name(&cfg.name)
                    .packet_information(false)
                    .offload(opts.offload)
                    .inherit_enable_state()
                    .build_sync();
                match plain {
                    Ok(d) => {
                        eprintln!(
                            "tinygram: opened {} but could not configure it ({first}); run as root:\n  {}",
                            cfg.name,
                            cfg.ip_commands()[1..].join("\n  ")
                        );
                        (d, false)
                    }
                    Err(e) => {
                        return Err(io::Error::new(
                            e.kind(),
                            format!(
                                "cannot open TUN device {} ({e}); create it as root with:\n  {}\n  (add `user $(id -un)` to the first command to run tinygram without root)",
                                cfg.name,
                                cfg.ip_commands().join("\n  ")
                            ),
                        ))
                    }
                }
            }
        };
        dev.set_nonblocking(true)?;
        Ok(Tun {
            dev,
            configured,
            vnet_hdr: opts.offload,
            busy_poll: opts.busy_poll,
        })
    }

    /// One frame (a virtio-net header first when [`vnet_hdr`](Self::vnet_hdr)),
    /// or `None` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is valid for writes of its length; the fd is open.
        let n = unsafe { libc::read(self.raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Writes one frame; `false` if the device would block (the packet is
    /// dropped, as a full NIC queue would; TCP recovers).
    pub fn send(&self, pkt: &[u8]) -> io::Result<bool> {
        self.send_vectored(&[pkt])
    }

    /// Writes one frame gathered from `parts` (writev(2)): a virtio-net
    /// header, headers and payloads are not copied together first.
    pub fn send_vectored(&self, parts: &[&[u8]]) -> io::Result<bool> {
        let iov: Vec<libc::iovec> = parts
            .iter()
            .map(|p| libc::iovec {
                iov_base: p.as_ptr() as *mut libc::c_void,
                iov_len: p.len(),
            })
            .collect();
        loop {
            // SAFETY: every iovec points into a live slice of its length.
            let n = unsafe { libc::writev(self.raw_fd(), iov.as_ptr(), iov.len() as libc::c_int) };
            if n >= 0 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Ok(false),
                _ => return Err(e),
            }
        }
    }

    pub fn raw_fd(&self) -> RawFd {
        self.dev.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_and_kernel_side() {
        assert_eq!(
            parse_cidr("10.7.0.2/24"),
            Ok((Ipv4Addr::new(10, 7, 0, 2), 24))
        );
        assert!(parse_cidr("10.7.0.2").is_err());
        assert!(parse_cidr("10.7.0.2/33").is_err());
        assert_eq!(
            default_kernel_addr(Ipv4Addr::new(10, 7, 0, 2), 24),
            Ipv4Addr::new(10, 7, 0, 1)
        );
        assert_eq!(
            default_kernel_addr(Ipv4Addr::new(10, 7, 0, 1), 24),
            Ipv4Addr::new(10, 7, 0, 2)
        );
    }
}
