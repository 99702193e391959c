//! Standard output that survives its reader going away.
//!
//! Contract: [`outln!`] and [`out!`] are `outln!` and `print!` for the CLI's reports, except
//! that a closed or failed stdout (`planewave run | head`) is ignored instead of panicking: the
//! run goes on, and its JSON, checkpoint and other files are still written.

/// `outln!` that ignores a closed stdout.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that ignores a closed stdout.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}
