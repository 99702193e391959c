//! The checkpoint file on disk: framing, sections, checksums, atomic replacement.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! "PWCKPT\r\n"            8 bytes, magic
//! version                 u32 (FORMAT_VERSION)
//! byte-order mark         u32 0x01020304 as written by the writer (reads 04 03 02 01 on disk)
//! section data ...        raw arrays, one after the other, in the order of the footer's list
//! footer                  UTF-8 JSON: {"meta": {...}, "sections": [{name, kind, count,
//!                         offset, bytes, crc32}, ...]}
//! footer length           u64
//! footer CRC-32           u32 (of the footer bytes)
//! "PWCKEND\n"             8 bytes
//! ```
//!
//! Section kinds: `c64` (pairs of f64: re, im), `f64`, `i32x3` (Miller index triples). Offsets
//! are from the start of the file; every section's CRC-32 (IEEE) covers its bytes.
//!
//! Contract: [`FileWriter`] writes to `<path>.tmp`, and only [`FileWriter::finish`] (after an
//! fsync) renames it over `path`, so an interrupted write (a crash, `kill -9`) leaves a previous
//! checkpoint intact; a writer dropped unfinished removes its temporary file. [`FileReader::open`]
//! checks the framing, the footer's checksum and every section's checksum before anything is
//! used, and names the file and the problem in its error.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Testing aid: the writing process aborts (as if killed) once it has written more than this
/// many bytes of a checkpoint.
pub const ABORT_AFTER_ENV: &str = "PLANEWAVE_CHECKPOINT_ABORT_AFTER";

/// First 8 bytes of every checkpoint.
pub const MAGIC: &[u8; 8] = b"PWCKPT\r\n";
/// Last 8 bytes of every checkpoint.
pub const END_MAGIC: &[u8; 8] = b"PWCKEND\n";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
const BYTE_ORDER_MARK: u32 = 0x0102_0304;
/// Bytes after the footer: its length, its CRC, the end magic.
const TRAILER: u64 = 8 + 4 + 8;
const HEADER: u64 = 8 + 4 + 4;

/// One array of the file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Section {
    /// Its name (e.g. `bands/0/3`).
    pub name: String,
    /// Element kind: `c64`, `f64` or `i32x3`.
    pub kind: String,
    /// Number of elements.
    pub count: u64,
    /// Byte offset from the start of the file.
    pub offset: u64,
    /// Length in bytes.
    pub bytes: u64,
    /// CRC-32 (IEEE) of those bytes.
    pub crc32: u32,
}

/// Bytes per element of a section kind.
fn element_bytes(kind: &str) -> Option<u64> {
    match kind {
        "c64" => Some(16),
        "f64" => Some(8),
        "i32x3" => Some(12),
        _ => None,
    }
}

/// The footer: metadata of the run (`M`) and the list of sections.
#[derive(Serialize, Deserialize)]
pub struct Footer<M> {
    /// What the file holds.
    pub meta: M,
    /// Where each array is.
    pub sections: Vec<Section>,
}

/// Streams sections into `<path>.tmp` and renames it over `path` when finished.
pub struct FileWriter {
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    pos: u64,
    sections: Vec<Section>,
    open: Option<(Section, crc32fast::Hasher)>,
    abort_after: Option<u64>,
}

impl FileWriter {
    /// Start a checkpoint that will replace `path`.
    pub fn create(path: &Path) -> Result<Self, String> {
        let tmp = temporary_name(path);
        let file = File::create(&tmp)
            .map_err(|e| format!("cannot write checkpoint {}: {e}", tmp.display()))?;
        let mut w = Self {
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            tmp,
            path: path.to_path_buf(),
            pos: 0,
            sections: Vec::new(),
            open: None,
            abort_after: std::env::var(ABORT_AFTER_ENV)
                .ok()
                .and_then(|v| v.trim().parse().ok()),
        };
        w.raw(MAGIC)?;
        w.raw(&FORMAT_VERSION.to_le_bytes())?;
        w.raw(&BYTE_ORDER_MARK.to_le_bytes())?;
        Ok(w)
    }

    fn raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        let out = self.out.as_mut().expect("the writer is open");
        out.write_all(bytes)
            .map_err(|e| format!("cannot write checkpoint {}: {e}", self.tmp.display()))?;
        self.pos += bytes.len() as u64;
        if self.abort_after.is_some_and(|n| self.pos > n) {
            let _ = out.flush();
            std::process::abort();
        }
        Ok(())
    }

    /// Open section `name` of `count` elements of `kind`; its data follows by
    /// [`FileWriter::data`] calls and must add up to exactly that.
    pub fn begin(&mut self, name: &str, kind: &str, count: usize) {
        assert!(self.open.is_none(), "section {name} begun inside another");
        let size = element_bytes(kind).expect("a known section kind");
        let s = Section {
            name: name.to_string(),
            kind: kind.to_string(),
            count: count as u64,
            offset: self.pos,
            bytes: size * count as u64,
            crc32: 0,
        };
        self.open = Some((s, crc32fast::Hasher::new()));
    }

    /// Bytes of the open section.
    pub fn data(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.open
            .as_mut()
            .expect("data written inside a section")
            .1
            .update(bytes);
        self.raw(bytes)
    }

    /// Close the open section.
    pub fn end(&mut self) {
        let (mut s, h) = self.open.take().expect("a section is open");
        assert_eq!(self.pos - s.offset, s.bytes, "section {} length", s.name);
        s.crc32 = h.finalize();
        self.sections.push(s);
    }

    /// Write the footer, flush, fsync and rename over the final path (then fsync its folder).
    pub fn finish<M: Serialize>(mut self, meta: M) -> Result<(), String> {
        let footer = Footer {
            meta,
            sections: std::mem::take(&mut self.sections),
        };
        let text = serde_json::to_vec(&footer).expect("the footer serialises");
        self.raw(&text)?;
        self.raw(&(text.len() as u64).to_le_bytes())?;
        self.raw(&crc32fast::hash(&text).to_le_bytes())?;
        self.raw(END_MAGIC)?;
        let err =
            |e: std::io::Error| format!("cannot write checkpoint {}: {e}", self.tmp.display());
        let file = self
            .out
            .take()
            .expect("the writer is open")
            .into_inner()
            .map_err(|e| err(e.into_error()))?;
        file.sync_all().map_err(err)?;
        drop(file);
        std::fs::rename(&self.tmp, &self.path).map_err(|e| {
            format!(
                "cannot rename {} to {}: {e}",
                self.tmp.display(),
                self.path.display()
            )
        })?;
        // The rename itself is durable once the folder is synced (best effort: some file
        // systems refuse to open a folder).
        if let Some(dir) = self.path.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// `<path>.tmp`: where a checkpoint is written before it replaces `path`.
pub fn temporary_name(path: &Path) -> PathBuf {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    PathBuf::from(tmp)
}

/// A checkpoint whose framing and checksums have been verified.
pub struct FileReader<M> {
    file: File,
    path: PathBuf,
    /// The metadata.
    pub meta: M,
    sections: Vec<Section>,
}

impl<M: for<'de> Deserialize<'de>> FileReader<M> {
    /// Open and verify `path`: magic, version, byte order, footer, and every section's CRC.
    pub fn open(path: &Path) -> Result<Self, String> {
        let bad = |what: String| format!("checkpoint {}: {what}", path.display());
        let mut file = File::open(path).map_err(|e| bad(format!("cannot open it ({e})")))?;
        let len = file
            .metadata()
            .map_err(|e| bad(format!("cannot read it ({e})")))?
            .len();
        if len < HEADER + TRAILER {
            return Err(bad(format!(
                "only {len} bytes: not a planewave checkpoint, or truncated"
            )));
        }
        let mut head = [0u8; HEADER as usize];
        read_at(&mut file, 0, &mut head).map_err(|e| bad(e.to_string()))?;
        if &head[..8] != MAGIC {
            return Err(bad("not a planewave checkpoint (wrong magic bytes)".into()));
        }
        let version = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes"));
        if version != FORMAT_VERSION {
            return Err(bad(format!(
                "format version {version}; this planewave reads version {FORMAT_VERSION}"
            )));
        }
        let mark = u32::from_le_bytes(head[12..16].try_into().expect("4 bytes"));
        if mark != BYTE_ORDER_MARK {
            return Err(bad(format!(
                "byte-order mark {mark:#010x}: written with another byte order"
            )));
        }
        let mut tail = [0u8; TRAILER as usize];
        read_at(&mut file, len - TRAILER, &mut tail).map_err(|e| bad(e.to_string()))?;
        if &tail[12..] != END_MAGIC {
            return Err(bad(
                "truncated or unfinished (no end marker): use an earlier checkpoint".into(),
            ));
        }
        let footer_len = u64::from_le_bytes(tail[..8].try_into().expect("8 bytes"));
        let footer_crc = u32::from_le_bytes(tail[8..12].try_into().expect("4 bytes"));
        if footer_len > len - HEADER - TRAILER {
            return Err(bad(format!("footer length {footer_len} beyond the file")));
        }
        let mut text = vec![0u8; footer_len as usize];
        read_at(&mut file, len - TRAILER - footer_len, &mut text)
            .map_err(|e| bad(e.to_string()))?;
        if crc32fast::hash(&text) != footer_crc {
            return Err(bad(
                "the footer's checksum does not match (corrupted)".into()
            ));
        }
        let footer: Footer<M> =
            serde_json::from_slice(&text).map_err(|e| bad(format!("unreadable footer ({e})")))?;
        let data_end = len - TRAILER - footer_len;
        for s in &footer.sections {
            verify(&mut file, s, data_end).map_err(bad)?;
        }
        Ok(Self {
            file,
            path: path.to_path_buf(),
            meta: footer.meta,
            sections: footer.sections,
        })
    }

    /// The section called `name`.
    pub fn section(&self, name: &str) -> Result<&Section, String> {
        self.sections
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("checkpoint {}: no section {name}", self.path.display()))
    }

    /// Elements `first..first + count` of section `name` (of `kind`), as raw bytes.
    pub fn read(
        &mut self,
        name: &str,
        kind: &str,
        first: usize,
        count: usize,
    ) -> Result<Vec<u8>, String> {
        let s = self.section(name)?.clone();
        let size = element_bytes(kind).expect("a known kind");
        if s.kind != kind || (first + count) as u64 > s.count {
            return Err(format!(
                "checkpoint {}: section {name} holds {} {}, not {} {kind} from {first}",
                self.path.display(),
                s.count,
                s.kind,
                count
            ));
        }
        let mut buf = vec![0u8; (size * count as u64) as usize];
        read_at(&mut self.file, s.offset + size * first as u64, &mut buf)
            .map_err(|e| format!("checkpoint {}: {e}", self.path.display()))?;
        Ok(buf)
    }
}

fn read_at(file: &mut File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// Check that section `s` lies in the data and that its bytes have its CRC.
fn verify(file: &mut File, s: &Section, data_end: u64) -> Result<(), String> {
    let size =
        element_bytes(&s.kind).ok_or(format!("section {} of unknown kind {}", s.name, s.kind))?;
    if s.bytes != size * s.count || s.offset < HEADER || s.offset + s.bytes > data_end {
        return Err(format!("section {} lies outside the data", s.name));
    }
    file.seek(SeekFrom::Start(s.offset))
        .map_err(|e| e.to_string())?;
    let mut h = crc32fast::Hasher::new();
    let mut left = s.bytes;
    let mut buf = vec![0u8; 1 << 20];
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        file.read_exact(&mut buf[..n]).map_err(|e| e.to_string())?;
        h.update(&buf[..n]);
        left -= n as u64;
    }
    if h.finalize() != s.crc32 {
        return Err(format!(
            "section {} does not match its checksum (corrupted)",
            s.name
        ));
    }
    Ok(())
}

/// Little-endian bytes of complex numbers (re, im).
pub fn c64_bytes(z: &[num_complex::Complex64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 * z.len());
    for c in z {
        out.extend_from_slice(&c.re.to_le_bytes());
        out.extend_from_slice(&c.im.to_le_bytes());
    }
    out
}

/// Complex numbers from little-endian bytes.
pub fn c64_from(bytes: &[u8]) -> Vec<num_complex::Complex64> {
    bytes
        .chunks_exact(16)
        .map(|b| {
            let re = f64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
            let im = f64::from_le_bytes(b[8..].try_into().expect("8 bytes"));
            num_complex::Complex64::new(re, im)
        })
        .collect()
}

/// Little-endian bytes of Miller index triples.
pub fn millers_bytes(m: &[[i32; 3]]) -> Vec<u8> {
    m.iter()
        .flat_map(|t| t.iter().flat_map(|x| x.to_le_bytes()))
        .collect()
}

/// Miller index triples from little-endian bytes.
pub fn millers_from(bytes: &[u8]) -> Vec<[i32; 3]> {
    bytes
        .chunks_exact(12)
        .map(|b| {
            let x = |i: usize| i32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes"));
            [x(0), x(1), x(2)]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64;

    fn sample(dir: &Path) -> PathBuf {
        let path = dir.join("a.ckpt");
        let mut w = FileWriter::create(&path).unwrap();
        let z: Vec<Complex64> = (0..100).map(|i| Complex64::new(i as f64, -0.5)).collect();
        w.begin("z", "c64", z.len());
        w.data(&c64_bytes(&z[..40])).unwrap();
        w.data(&c64_bytes(&z[40..])).unwrap();
        w.end();
        let m = vec![[1, -2, 3], [0, 0, 0]];
        w.begin("m", "i32x3", 2);
        w.data(&millers_bytes(&m)).unwrap();
        w.end();
        w.finish(serde_json::json!({"what": "test"})).unwrap();
        path
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pw-format-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn sections_read_back_and_the_temporary_is_gone() {
        let d = scratch("roundtrip");
        let path = sample(&d);
        assert!(!temporary_name(&path).exists());
        let mut r = FileReader::<serde_json::Value>::open(&path).unwrap();
        assert_eq!(r.meta["what"], "test");
        let z = c64_from(&r.read("z", "c64", 10, 5).unwrap());
        assert_eq!(z[0], Complex64::new(10.0, -0.5));
        assert_eq!(z.len(), 5);
        let m = millers_from(&r.read("m", "i32x3", 0, 2).unwrap());
        assert_eq!(m, vec![[1, -2, 3], [0, 0, 0]]);
        assert!(r.read("z", "f64", 0, 1).is_err());
        assert!(r.read("z", "c64", 99, 2).is_err());
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn flipped_bytes_truncation_and_versions_are_named() {
        let d = scratch("corrupt");
        let path = sample(&d);
        let good = std::fs::read(&path).unwrap();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                {
                    let mut b = good.clone();
                    b[16 + 20] ^= 1;
                    b
                },
                "section z does not match its checksum",
            ),
            (
                {
                    let mut b = good.clone();
                    let n = b.len();
                    b[n - 30] ^= 4;
                    b
                },
                "footer's checksum",
            ),
            (good[..good.len() - 3].to_vec(), "truncated"),
            (good[..good.len() / 2].to_vec(), "truncated"),
            (
                {
                    let mut b = good.clone();
                    b[8] = 9;
                    b
                },
                "format version 9",
            ),
            (
                {
                    let mut b = good.clone();
                    b[0] = b'X';
                    b
                },
                "wrong magic",
            ),
            (Vec::new(), "only 0 bytes"),
        ];
        for (bytes, expect) in cases {
            std::fs::write(&path, &bytes).unwrap();
            let err = FileReader::<serde_json::Value>::open(&path).err().unwrap();
            assert!(err.contains(expect), "{err} (expected {expect})");
            assert!(err.contains("a.ckpt"), "{err}");
            assert_eq!(
                std::fs::read(&path).unwrap(),
                bytes,
                "the file is untouched"
            );
        }
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn an_unfinished_writer_leaves_the_previous_file() {
        let d = scratch("unfinished");
        let path = sample(&d);
        let before = std::fs::read(&path).unwrap();
        {
            let mut w = FileWriter::create(&path).unwrap();
            w.begin("z", "c64", 1);
            w.data(&c64_bytes(&[Complex64::new(1.0, 1.0)])).unwrap();
            w.end();
            assert!(temporary_name(&path).exists());
        }
        assert!(!temporary_name(&path).exists());
        assert_eq!(std::fs::read(&path).unwrap(), before);
        std::fs::remove_dir_all(d).unwrap();
    }
}
