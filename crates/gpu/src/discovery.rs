//! Finding the CUDA libraries on disk before anything loads them.
//!
//! Contract: [`find_libraries`] looks, in the folders of a [`SearchPath`], for each library of
//! [`REQUIRED`] under the file names cudarc's loader tries (`libcufft.so`, `libcufft.so.12`, ...)
//! and returns where each one is, or a [`MissingLibrary`] naming the first one not found and the
//! folders searched. It only reads directories: it loads nothing, so it never panics and can be
//! tested with empty files in a temporary folder. Whether the dynamic loader can open what was
//! found is checked by [`crate::Gpu::open`].

use std::fmt;
use std::path::{Path, PathBuf};

/// The libraries the back end needs, by cudarc's short name (`libNAME.so...`).
pub const REQUIRED: [&str; 6] = ["cuda", "cufft", "cublas", "cublasLt", "cusolver", "nvrtc"];

/// Ordered list of folders to look in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchPath {
    dirs: Vec<PathBuf>,
}

impl SearchPath {
    /// Exactly these folders, in this order (tests use a temporary folder).
    pub fn from_dirs<P: Into<PathBuf>>(dirs: impl IntoIterator<Item = P>) -> Self {
        let mut out: Vec<PathBuf> = Vec::new();
        for d in dirs.into_iter().map(Into::into) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        Self { dirs: out }
    }

    /// The folders of `LD_LIBRARY_PATH`, then `/usr/local/cuda/lib64`, the system library
    /// folders, and the `nvidia/*/lib` folders of Python environments (pip's CUDA wheels) under
    /// `$VIRTUAL_ENV`, `$CONDA_PREFIX`, `/usr`, `/usr/local`, `~/.local` and `/opt/*/.venv`.
    pub fn from_env() -> Self {
        let env_dirs = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
        let mut dirs: Vec<PathBuf> = std::env::split_paths(&env_dirs)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        for d in [
            "/usr/local/cuda/lib64",
            "/usr/lib/x86_64-linux-gnu",
            "/lib/x86_64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
        ] {
            dirs.push(d.into());
        }
        dirs.extend(python_nvidia_dirs(&python_prefixes()));
        Self::from_dirs(dirs)
    }

    /// The folders, in search order.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }
}

/// Roots of Python environments that may hold pip's `nvidia-*` wheels.
fn python_prefixes() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
        .collect();
    roots.extend(["/usr", "/usr/local"].map(PathBuf::from));
    if let Some(home) = std::env::var_os("HOME") {
        roots.push(Path::new(&home).join(".local"));
    }
    for opt in subdirs(Path::new("/opt")) {
        roots.push(opt.join(".venv"));
        roots.push(opt);
    }
    roots
}

/// `PREFIX/lib/python3*/{site,dist}-packages/nvidia/*/lib` for each prefix, sorted.
pub fn python_nvidia_dirs(prefixes: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for prefix in prefixes {
        for py in subdirs(&prefix.join("lib")) {
            let name = py.file_name().map(|n| n.to_string_lossy().into_owned());
            if !name.is_some_and(|n| n.starts_with("python3")) {
                continue;
            }
            for pkgs in ["site-packages", "dist-packages"] {
                for wheel in subdirs(&py.join(pkgs).join("nvidia")) {
                    let lib = wheel.join("lib");
                    if lib.is_dir() {
                        out.push(lib);
                    }
                }
            }
        }
    }
    out
}

/// The sub-folders of `dir`, sorted (none if it cannot be read).
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The file names of library `name` that cudarc's loader tries on Linux, in its order:
/// `libNAME.so` and `libNAME.so.MAJOR` (cudarc also tries Windows-style names such as
/// `libNAME64_13.so`, left out here).
pub fn candidate_names(name: &str) -> Vec<String> {
    let prefix = format!("lib{name}.so");
    let mut out: Vec<String> = Vec::new();
    for c in cudarc::get_lib_name_candidates(name) {
        let linux = c == prefix || c.strip_prefix(&prefix).is_some_and(|v| v.starts_with('.'));
        if linux && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// The file name library `name` has in CUDA 13 with driver 580 (`libcufft.so.12`): what to
/// point `LD_LIBRARY_PATH` at.
pub fn usual_file_name(name: &str) -> String {
    let major = match name {
        "cuda" => "1",
        "cufft" | "cusolver" => "12",
        _ => "13",
    };
    format!("lib{name}.so.{major}")
}

/// One library found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundLibrary {
    /// Short name, as in [`REQUIRED`].
    pub name: &'static str,
    /// The file found.
    pub path: PathBuf,
}

/// Where every library of [`REQUIRED`] was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Libraries {
    /// In the order of [`REQUIRED`].
    pub found: Vec<FoundLibrary>,
}

impl Libraries {
    /// The file found for library `name`, if it is one of [`REQUIRED`].
    pub fn path(&self, name: &str) -> Option<&Path> {
        self.found
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.path.as_path())
    }
}

/// A library of [`REQUIRED`] found in none of the folders searched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingLibrary {
    /// Short name, as in [`REQUIRED`].
    pub name: &'static str,
    /// The file names looked for.
    pub file_names: Vec<String>,
    /// The folders searched, in order.
    pub searched: Vec<PathBuf>,
}

impl fmt::Display for MissingLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dirs: Vec<String> = self
            .searched
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        write!(
            f,
            "lib{}.so not found (looked for {} in: {})",
            self.name,
            self.file_names.join(", "),
            if dirs.is_empty() {
                "no folder".to_string()
            } else {
                dirs.join(":")
            }
        )
    }
}

impl std::error::Error for MissingLibrary {}

/// Find every library of [`REQUIRED`] in `search` (first folder wins, then the first candidate
/// name in cudarc's order).
pub fn find_libraries(search: &SearchPath) -> Result<Libraries, MissingLibrary> {
    let found = REQUIRED
        .iter()
        .map(|&name| find_library(name, search))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Libraries { found })
}

/// Find library `name` (a name of [`REQUIRED`]) in `search`.
pub fn find_library(
    name: &'static str,
    search: &SearchPath,
) -> Result<FoundLibrary, MissingLibrary> {
    let file_names = candidate_names(name);
    for dir in search.dirs() {
        if let Some(path) = file_names.iter().map(|f| dir.join(f)).find(|p| p.is_file()) {
            return Ok(FoundLibrary { name, path });
        }
    }
    Err(MissingLibrary {
        name,
        file_names,
        searched: search.dirs().to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh empty folder under the system temporary folder.
    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("planewave-gpu-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn touch(dir: &Path, names: &[&str]) {
        for n in names {
            std::fs::write(dir.join(n), b"").unwrap();
        }
    }

    const ALL: [&str; 6] = [
        "libcuda.so.1",
        "libcufft.so.12",
        "libcublas.so.13",
        "libcublasLt.so.13",
        "libcusolver.so.12",
        "libnvrtc.so.13",
    ];

    #[test]
    fn finds_every_library_in_a_folder() {
        let d = temp_dir("all");
        touch(&d, &ALL);
        let libs = find_libraries(&SearchPath::from_dirs([&d])).unwrap();
        assert_eq!(libs.found.len(), REQUIRED.len());
        assert_eq!(libs.path("cufft"), Some(d.join("libcufft.so.12").as_path()));
        assert_eq!(libs.path("cuda"), Some(d.join("libcuda.so.1").as_path()));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn first_folder_wins_and_later_folders_are_searched() {
        let (a, b) = (temp_dir("a"), temp_dir("b"));
        touch(&a, &ALL[..3]);
        touch(&b, &ALL);
        let libs = find_libraries(&SearchPath::from_dirs([&a, &b])).unwrap();
        assert_eq!(libs.path("cufft").unwrap(), a.join("libcufft.so.12"));
        assert_eq!(libs.path("nvrtc").unwrap(), b.join("libnvrtc.so.13"));
        std::fs::remove_dir_all(&a).unwrap();
        std::fs::remove_dir_all(&b).unwrap();
    }

    #[test]
    fn missing_library_is_named_with_the_folders_searched() {
        let (a, b) = (temp_dir("m1"), temp_dir("m2"));
        let without_cusolver: Vec<&str> = ALL
            .iter()
            .copied()
            .filter(|n| !n.contains("cusolver"))
            .collect();
        touch(&a, &without_cusolver);
        let err = find_libraries(&SearchPath::from_dirs([&a, &b])).unwrap_err();
        assert_eq!(err.name, "cusolver");
        assert_eq!(err.searched, vec![a.clone(), b.clone()]);
        let msg = err.to_string();
        assert!(msg.contains("libcusolver.so.12"), "{msg}");
        assert!(!msg.contains("libcusolver64"), "{msg}");
        assert!(msg.contains(&a.display().to_string()) && msg.contains(&b.display().to_string()));
        std::fs::remove_dir_all(&a).unwrap();
        std::fs::remove_dir_all(&b).unwrap();
    }

    #[test]
    fn a_folder_named_like_a_library_is_not_a_library() {
        let d = temp_dir("dir");
        touch(&d, &ALL[1..]);
        std::fs::create_dir_all(d.join("libcuda.so.1")).unwrap();
        assert_eq!(
            find_libraries(&SearchPath::from_dirs([&d]))
                .unwrap_err()
                .name,
            "cuda"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn candidate_names_are_the_linux_ones_of_cudarc() {
        let c = candidate_names("cufft");
        assert_eq!(c[0], "libcufft.so");
        assert!(c.contains(&"libcufft.so.12".to_string()));
        assert!(c.iter().all(|n| n.starts_with("libcufft.so")), "{c:?}");
        assert!(candidate_names("cuda").contains(&usual_file_name("cuda")));
    }

    #[test]
    fn python_wheel_folders_are_found() {
        let root = temp_dir("py");
        let lib = root.join("lib/python3.12/site-packages/nvidia/cufft/lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::create_dir_all(root.join("lib/perl5/site-packages/nvidia/x/lib")).unwrap();
        assert_eq!(python_nvidia_dirs(std::slice::from_ref(&root)), vec![lib]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn search_path_from_env_has_the_fixed_folders_once() {
        let s = SearchPath::from_env();
        let n = |p: &str| {
            s.dirs()
                .iter()
                .filter(|d| d.as_path() == Path::new(p))
                .count()
        };
        assert_eq!(n("/usr/local/cuda/lib64"), 1);
        assert_eq!(n("/usr/lib/x86_64-linux-gnu"), 1);
    }
}
