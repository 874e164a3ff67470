//! One error type for the library: every bad input names the object (or line) and the problem.

use std::path::PathBuf;

/// Everything that can go wrong in sweepfan, with enough context to act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scene has no objects: there is nothing to collide, and a zero-pair answer would hide a
    /// caller's bug (an empty file, a filter that removed everything).
    #[error("empty scene: at least one object is needed")]
    EmptyScene,
    /// An object with a NaN or infinite coordinate or radius, a negative radius, or a coordinate
    /// so large that squared distances would overflow f32.
    #[error("object {index}: {problem}")]
    InvalidObject { index: usize, problem: String },
    /// A scene or shape file that does not parse; `line` is 1-based and counts the header.
    #[error("{path}: line {line}: {problem}")]
    Parse {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    /// A request that cannot be met within memory or device limits (e.g. more pairs than memory
    /// holds, a buffer larger than the adapter's `max_storage_buffer_binding_size`).
    #[error("too large: {0}")]
    TooLarge(String),
    /// No GPU adapter was found (or the requested one does not exist).
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// Any other GPU failure: device request, lost device, validation error, mapping failure.
    #[error("GPU: {0}")]
    Gpu(String),
    /// A configuration error: unknown method, bad parameter combination.
    #[error("{0}")]
    Config(String),
    /// Ranks of a distributed run failed (docs/design.md §2.11): on rank 0, each failed rank
    /// with its error; on the others, which ranks failed.
    #[error("{0}")]
    Rank(String),
    /// The call was cancelled through its cancellation token (`broadphase::cancel`) before it
    /// finished (docs/design.md §9.18).
    #[error("interrupted: the call was cancelled before it finished")]
    Interrupted,
    /// An error from a step of a larger run, with what that step was.
    #[error("{context}: {source}")]
    Context {
        context: String,
        #[source]
        source: Box<Error>,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Adds what was being done to an error, as `anyhow::Context` does for the binary.
pub trait ResultExt<T> {
    fn context_with(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> ResultExt<T> for Result<T> {
    fn context_with(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Context {
            context: context(),
            source: Box::new(source),
        })
    }
}

/// Longest piece of echoed input [`shown`] keeps, in characters.
pub const SHOWN_MAX_CHARS: usize = 80;

/// Text from a file or the command line as a message may echo it: control characters escaped
/// (`\r`, `\0`, `\x1b`, ...; a carriage return would otherwise send the terminal back to the start
/// of the line and hide the message), as are invisible format characters (zero-width,
/// bidirectional overrides, a byte-order mark) and whatever else `char::escape_debug` escapes;
/// quotes and backslashes are kept as typed. Longer than [`SHOWN_MAX_CHARS`] characters, the rest is replaced by `...`.
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4 * SHOWN_MAX_CHARS));
    for (i, c) in text.chars().enumerate() {
        if i == SHOWN_MAX_CHARS {
            out.push_str("...");
            break;
        }
        match c {
            '\0' => out.push_str("\\0"),
            '"' | '\'' | '\\' => out.push(c),
            c if c.is_control() => match c {
                '\t' | '\r' | '\n' => out.extend(c.escape_default()),
                c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            },
            // Zero-width and bidirectional format characters, the byte-order mark.
            '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{feff}' => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.extend(c.escape_debug()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn shown_escapes_what_a_terminal_would_act_on() {
        assert_eq!(shown("1.5e3"), "1.5e3");
        assert_eq!(shown("x,y\rz"), "x,y\\rz");
        assert_eq!(shown("0\0"), "0\\0");
        assert_eq!(shown("\u{1b}[31m"), "\\x1b[31m");
        assert_eq!(shown("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(shown("'q\"\\"), "'q\"\\");
        assert_eq!(shown("héllo"), "héllo");
        let long = "9".repeat(200);
        assert_eq!(shown(&long), format!("{}...", &long[..80]));
        assert!(!shown("a\u{85}b").contains('\u{85}'));
    }
}
