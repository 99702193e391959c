//! The communication model `planewave advise` projects runs with: one latency/bandwidth link
//! between the ranks of a node and one between nodes, built in or measured on the machine.
//!
//! Contract:
//! - [`CommModel::built_in`]: the intra-node latency behind the lent 16-core node's ranking
//!   (see `advise.rs`), and for the network a 100 Gb/s card per node with 5 µs per message, a
//!   typical InfiniBand HDR cluster that nobody measured for this project.
//! - `planewave bench comm --save FILE` measures the machine's links
//!   ([`planewave_comm::links::measure_links`]) and writes them as a [`Calibration`] (JSON,
//!   [`SCHEMA`]); [`CommModel::load`] reads it back, and each link it measured replaces the
//!   built-in one: the intra-node latency too, so a calibration re-ranks one-node layouts by
//!   the measured latency (advise uses no intra-node bandwidth: those bytes are in its G-vector
//!   efficiency). A file that cannot be read or parsed is one error naming the file.

use planewave_comm::links::{Link, Links};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Version of the calibration file.
pub const SCHEMA: u32 = 1;

/// Seconds per message between two ranks of one node: the transposes' 1.5e-5 s per band and
/// other rank over about 9 transposes per band and SCF iteration (`advise.rs`).
const INTRA_LATENCY: f64 = 1.5e-5 / 9.0;
/// Seconds per byte between two ranks of one node (shared memory, ~10 GB/s per rank).
const INTRA_BYTE: f64 = 1.0e-10;
/// Seconds per message between nodes (all-to-all message over InfiniBand, software included).
const INTER_LATENCY: f64 = 5.0e-6;
/// Seconds per byte through one node's network card (100 Gb/s: 12.5 GB/s).
const INTER_BYTE: f64 = 8.0e-11;

/// One link as the file stores it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct LinkRecord {
    /// Seconds per message.
    pub latency_s: f64,
    /// Seconds per byte.
    pub seconds_per_byte: f64,
}

impl From<Link> for LinkRecord {
    fn from(l: Link) -> Self {
        Self {
            latency_s: l.latency_s,
            seconds_per_byte: l.seconds_per_byte,
        }
    }
}

impl From<LinkRecord> for Link {
    fn from(l: LinkRecord) -> Self {
        Self {
            latency_s: l.latency_s,
            seconds_per_byte: l.seconds_per_byte,
        }
    }
}

/// What `planewave bench comm --save` writes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The back end measured ("mpi" or "threads").
    pub backend: String,
    /// Ranks of the measurement.
    pub ranks: usize,
    /// Nodes it spanned.
    pub nodes: usize,
    /// The ranks of a node between themselves (null with one rank per node).
    pub intra: Option<LinkRecord>,
    /// One rank per node between nodes (null on one node).
    pub inter: Option<LinkRecord>,
}

impl From<&Links> for Calibration {
    fn from(l: &Links) -> Self {
        Self {
            schema: SCHEMA,
            backend: l.backend.clone(),
            ranks: l.ranks,
            nodes: l.nodes,
            intra: l.intra.map(Into::into),
            inter: l.inter.map(Into::into),
        }
    }
}

/// The links a projection uses, and where they came from.
#[derive(Clone, Debug, PartialEq)]
pub struct CommModel {
    /// Between the ranks of one node.
    pub intra: Link,
    /// Through a node's network card (shared by the node's ranks).
    pub inter: Link,
    /// One line for the report: built in, or which file measured which link.
    pub source: String,
}

impl CommModel {
    /// The built-in links (module doc).
    pub fn built_in() -> Self {
        Self {
            intra: Link {
                latency_s: INTRA_LATENCY,
                seconds_per_byte: INTRA_BYTE,
            },
            inter: Link {
                latency_s: INTER_LATENCY,
                seconds_per_byte: INTER_BYTE,
            },
            source: "built in (intra-node from the lent 16-core node; inter-node an assumed 100 Gb/s network with 5 us per message: measure yours with planewave bench comm --save FILE)".into(),
        }
    }

    /// The built-in links with those `path` measured in their place.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read the communication model {}: {e}",
                path.display()
            )
        })?;
        let c: Calibration = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: not a calibration written by planewave bench comm --save: {e}",
                path.display()
            )
        })?;
        if c.schema != SCHEMA {
            return Err(format!(
                "{}: calibration schema {} (this planewave reads {SCHEMA}): measure again with planewave bench comm --save",
                path.display(),
                c.schema
            ));
        }
        let mut m = Self::built_in();
        let mut measured = Vec::new();
        if let Some(l) = c.intra {
            m.intra = l.into();
            measured.push("intra-node");
        }
        if let Some(l) = c.inter {
            m.inter = l.into();
            measured.push("inter-node");
        }
        m.source = match measured.len() {
            0 => format!(
                "{}: no link measured (one rank); built-in links",
                path.display()
            ),
            _ => format!(
                "{} ({} measured on {} {} rank(s) over {} node(s){})",
                path.display(),
                measured.join(" and "),
                c.ranks,
                c.backend,
                c.nodes,
                if c.inter.is_none() {
                    "; inter-node built in"
                } else {
                    ""
                }
            ),
        };
        Ok(m)
    }

    /// The links as advise uses them, for the report: the intra-node latency (the bytes inside
    /// a node are in advise's G-vector efficiency), and the inter-node latency and bandwidth.
    pub fn describe(&self) -> String {
        format!(
            "intra-node {:.2} us per message; inter-node {} per node",
            self.intra.latency_s * 1e6,
            self.inter
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_calibration_replaces_the_links_it_measured() {
        let dir = std::env::temp_dir().join(format!("pw-comm-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("comm.json");
        let links = Links {
            ranks: 4,
            nodes: 1,
            intra: Some(Link {
                latency_s: 3e-6,
                seconds_per_byte: 2e-10,
            }),
            inter: None,
            backend: "mpi".into(),
        };
        let text = serde_json::to_string(&Calibration::from(&links)).unwrap();
        std::fs::write(&path, text).unwrap();
        let m = CommModel::load(&path).unwrap();
        assert_eq!(m.intra, links.intra.unwrap());
        assert_eq!(m.inter, CommModel::built_in().inter);
        assert!(m
            .source
            .contains("intra-node measured on 4 mpi rank(s) over 1 node(s)"));
        std::fs::write(&path, "{\"schema\": 1}").unwrap();
        let e = CommModel::load(&path).unwrap_err();
        assert!(e.contains("comm.json: not a calibration"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
