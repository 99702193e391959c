//! Helpers shared by the command-line tests.

use std::process::Command;

/// Start `cmd`, send `signal` (a `kill` option such as `-TERM`) to it once it prints a line
/// starting with `prefix`, and wait for the end: (exit code, stdout, stderr).
pub fn signal_after_line(
    cmd: &mut Command,
    signal: &str,
    prefix: &str,
) -> (Option<i32>, String, String) {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap() > 0 {
        seen.push_str(&line);
        if line.starts_with(prefix) {
            let pid = child.id().to_string();
            let ok = Command::new("kill").args([signal, &pid]).status().unwrap();
            assert!(ok.success());
            break;
        }
        line.clear();
    }
    stdout.read_to_string(&mut seen).unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code(), seen, err)
}
