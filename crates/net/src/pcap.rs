//! `--pcap FILE`: every IP packet read from and written to the device, raw IP
//! link type, wall-clock timestamps, so Wireshark and `tinygram diagnose` read it.

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::time::SystemTime;

pub struct Capture {
    w: PcapWriter<BufWriter<File>>,
}

fn to_io(e: pcap_file::PcapError) -> io::Error {
    io::Error::other(e.to_string())
}

impl Capture {
    pub fn create(path: &Path) -> io::Result<Capture> {
        let file = BufWriter::new(File::create(path)?);
        let header = PcapHeader {
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::NanoSecond,
            snaplen: 65535,
            ..PcapHeader::default()
        };
        Ok(Capture {
            w: PcapWriter::with_header(file, header).map_err(to_io)?,
        })
    }

    pub fn record(&mut self, pkt: &[u8]) -> io::Result<()> {
        let ts = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        self.w
            .write_packet(&PcapPacket::new(ts, pkt.len() as u32, pkt))
            .map(|_| ())
            .map_err(to_io)
    }

    pub fn finish(self) -> io::Result<()> {
        use std::io::Write;
        self.w.into_writer().flush()
    }
}
