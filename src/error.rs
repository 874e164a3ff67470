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
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
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
