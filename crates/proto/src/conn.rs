//! PLACEHOLDER: the connection state machine is being written; signatures are final.
#![allow(unused)]

use crate::{Config, Counters, Instant, SeqNumber, State, TcpRepr};

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnError {
    #[error("connection reset by peer")]
    Reset,
    #[error("connection refused")]
    Refused,
    #[error("connection timed out")]
    TimedOut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error("connection is closing or closed for sending")]
    Closed,
    #[error(transparent)]
    Conn(#[from] ConnError),
}

pub struct Connection {}

impl Connection {
    pub fn connect(
        config: Config,
        local_port: u16,
        remote_port: u16,
        isn: SeqNumber,
        now: Instant,
    ) -> Connection {
        todo!()
    }
    pub fn listen(config: Config, local_port: u16, isn: SeqNumber) -> Connection {
        todo!()
    }
    pub fn handle_segment(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        todo!()
    }
    pub fn handle_timeout(&mut self, now: Instant) {
        todo!()
    }
    pub fn poll_transmit(&mut self, now: Instant, payload: &mut Vec<u8>) -> Option<TcpRepr> {
        todo!()
    }
    pub fn poll_timeout(&self) -> Option<Instant> {
        todo!()
    }
    pub fn write(&mut self, data: &[u8], more_follows: bool) -> Result<usize, WriteError> {
        todo!()
    }
    pub fn flush(&mut self) {
        todo!()
    }
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        todo!()
    }
    pub fn close(&mut self) {
        todo!()
    }
    pub fn abort(&mut self) {
        todo!()
    }
    pub fn state(&self) -> State {
        todo!()
    }
    pub fn counters(&self) -> &Counters {
        todo!()
    }
    pub fn error(&self) -> Option<ConnError> {
        todo!()
    }
    pub fn send_space(&self) -> usize {
        todo!()
    }
    pub fn recv_available(&self) -> usize {
        todo!()
    }
    pub fn read_closed(&self) -> bool {
        todo!()
    }
    pub fn effective_mss(&self) -> usize {
        todo!()
    }
}
