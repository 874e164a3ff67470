//! One error type for the library: every bad input names the object (or line) and the problem.

use std::path::PathBuf;

/// Everything that can go wrong in sweepfan, with enough context to act on. Code that decides
/// what to do next (run in smaller parts, which Python exception) reads the kind and its data,
/// never the text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The scene has no objects where one must have some: a scene file or a generated scene of
    /// the tool (an empty file is a mistake there), a resident GPU frame (its buffers are sized
    /// by the scene). A broad phase's frame of no objects is no error: it has no pairs, and no
    /// `validate_*` refuses an empty slice (docs/design.md §1).
    #[error("empty scene: at least one object is needed")]
    EmptyScene,
    /// An object with a NaN or infinite coordinate or radius, a negative radius, or a coordinate
    /// so large that squared distances would overflow f32.
    #[error("object {index}: {problem}")]
    InvalidObject {
        /// The object's position in the caller's slice (or file, counting objects from 0).
        index: usize,
        /// What is wrong with it, for people.
        problem: String,
    },
    /// An object given by the caller's id (`BoxBroadPhase`) that cannot be used:
    /// a NaN or infinite coordinate, `min > max`, the same id twice in one call.
    #[error("object id {id}: {problem}")]
    InvalidId {
        /// The caller's id of the object.
        id: u64,
        /// What is wrong with it, for people.
        problem: String,
    },
    /// A scene or shape file that does not parse; `line` is 1-based and counts the header.
    #[error("{path}: line {line}: {problem}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 1-based line (the header is line 1).
        line: usize,
        /// What is wrong with the line, for people.
        problem: String,
    },
    /// A request that cannot be met within memory or device limits (e.g. more pairs than memory
    /// holds, a buffer larger than the adapter's `max_storage_buffer_binding_size`): which limit
    /// ([`Exceeds`], with the sizes where they are known) and the message for people.
    #[error("too large: {message}")]
    TooLarge {
        /// Which limit, with the sizes where they are known.
        exceeds: Exceeds,
        /// The request and the limit, for people.
        message: String,
    },
    /// No GPU adapter was found (or the requested one does not exist).
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// Any other GPU failure, by kind ([`GpuFailure`]): the device could not be opened or
    /// polled, the driver rejected a call, a shader did not compile, a read-back failed, the
    /// device cut its work short or its results disagreed with themselves.
    #[error("GPU: {message}")]
    Gpu {
        /// What failed.
        failure: GpuFailure,
        /// What happened, for people (with the driver's words where it gave some).
        message: String,
    },
    /// The GPU device was lost (driver reset, device removed, destroyed): no call on it can
    /// succeed again; open a new context.
    #[error("GPU device '{adapter}' lost: {reason}")]
    DeviceLost {
        /// The adapter's name.
        adapter: String,
        /// Why, as the driver said.
        reason: String,
    },
    /// What this build cannot do where it runs: in a browser (wasm32), a call that would block
    /// on the GPU device (the page's thread must not wait), or spread over threads.
    #[error("unsupported here: {0}")]
    Unsupported(String),
    /// A name that names nothing of its kind: `what` it was to name (`"method"`, `"scene"`),
    /// the name as given, every name that is known, and the words only some places take
    /// (`note`, empty or starting with `"; "`).
    #[error("unknown {what} '{}' (known: {}{note})", shown(.name), .known.join(", "))]
    UnknownName {
        /// The kind of thing the name was to name.
        what: &'static str,
        /// The name as given.
        name: String,
        /// Every name that is known.
        known: Vec<String>,
        /// What only some places or builds take, for people (`"; lists also take all"`).
        note: String,
    },
    /// Arguments that must hold one entry per object do not (ids and boxes, world ids and
    /// objects, velocities and spheres): `argument` holds `given` entries for `expected`.
    #[error("{message}")]
    LengthMismatch {
        /// The argument whose length is wrong.
        argument: &'static str,
        /// Its length.
        given: usize,
        /// The length it must have: one per object.
        expected: usize,
        /// Both, for people.
        message: String,
    },
    /// An argument out of its range, or arguments that cannot go together: a count that its
    /// buffer is too small for, an index past the objects given, a method where another kind is
    /// needed. `argument` names the parameter as the signature spells it.
    #[error("{message}")]
    InvalidArgument {
        /// The parameter at fault.
        argument: &'static str,
        /// What is wrong with it, for people.
        message: String,
    },
    /// The adapter lacks what was asked of it: a feature or a limit the kernels need
    /// (workgroup memory, subgroups, storage buffers per stage, a binding size). Another
    /// variant, another adapter or the CPU can run the work.
    #[error("{message}")]
    AdapterLacks {
        /// What the adapter lacks: `"workgroup memory"`, `"subgroups"`, `"storage buffers"`,
        /// `"binding size"`, `"adapter"` (the context's own).
        need: &'static str,
        /// The need and what the adapter gives, for people.
        message: String,
    },
    /// A call out of order on an object that keeps state: a frame finished that is not in
    /// flight, a part finished that was not started, a stage the object was not built with.
    #[error("{0}")]
    OutOfOrder(String),
    /// An option of a run that cannot be met: the tool's flags and their combinations, a
    /// page's settings. The library itself raises a typed kind instead.
    #[error("{0}")]
    Config(String),
    /// Ranks of a distributed run failed (docs/design.md §2.11): which ranks (every rank
    /// learns them), and on rank 0 each failed rank's own error in `message` (on the others,
    /// that rank 0 reports why).
    #[error("{message}")]
    Rank {
        /// The ranks that failed, ascending.
        failed: Vec<u32>,
        /// On rank 0, each failed rank with its error; elsewhere, which ranks failed.
        message: String,
    },
    /// A thread that ran part of the call panicked; the panic itself is raised again on the
    /// caller's thread (`partition`).
    #[error("{0}")]
    Panicked(String),
    /// The process's environment names something that does not exist (`WGPU_BACKEND` naming
    /// no backend): not the fault of any argument.
    #[error("{0}")]
    Environment(String),
    /// The call was cancelled through its cancellation token (`broadphase::cancel`) before it
    /// finished (docs/design.md §9.18).
    #[error("interrupted: the call was cancelled before it finished")]
    Interrupted,
    /// An error from a step of a larger run, with what that step was.
    #[error("{context}: {source}")]
    Context {
        /// What the step was.
        context: String,
        /// The step's error.
        #[source]
        source: Box<Error>,
    },
    /// A file that could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The library's result: [`Error`] unless named otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of GPU failure an [`Error::Gpu`] is: what a caller can do about it differs (another
/// adapter, smaller parts, a bug report).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuFailure {
    /// Opening the device, or waiting on it, failed.
    Device,
    /// wgpu or the driver rejected a call (a validation error reported by the device).
    Validation,
    /// A shader or a pipeline did not compile or link on this adapter.
    Shader,
    /// Reading results back failed: a map that did not complete, a short read-back.
    ReadBack,
    /// The device stopped its kernels' loops before they finished (lavapipe stops an
    /// invocation after 65,535 iterations): the result would be incomplete. Smaller parts or
    /// another driver run it.
    CutShort,
    /// The device's results disagreed with themselves (a count that changed between two runs
    /// of the same frame, more pairs listed than room was made for): a driver or library bug.
    Inconsistent,
    /// A library invariant that does not hold (a bug to report).
    Internal,
}

/// The limit an [`Error::TooLarge`] ran into. Sizes are in bytes unless named otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exceeds {
    /// One storage binding of the device (the adapter's limit, or the lower one set for the
    /// run): a frame in smaller parts fits (`partition`).
    Binding {
        /// Bytes the binding would hold.
        needed: u64,
        /// Bytes one binding may hold.
        allowed: u64,
    },
    /// One buffer of the device (`max_buffer_size`, a read-back): smaller parts fit too.
    Buffer {
        /// Bytes the buffer would hold.
        needed: u64,
        /// Bytes one buffer may hold.
        allowed: u64,
    },
    /// The device's workgroup size or dispatch dimensions.
    Dispatch,
    /// The device's memory (an allocation the driver refused).
    DeviceMemory,
    /// The memory this process may still use (`broadphase::memory`): `usable` when known.
    HostMemory {
        /// Bytes the request needs.
        needed: u64,
        /// Bytes the process may still use, when known.
        usable: Option<u64>,
    },
    /// A count past what 32-bit indices hold (objects, pairs, vertices, cells).
    Index32 {
        /// The count.
        count: u64,
    },
    /// A pair list's capacity: the pairs found against the pairs it holds (the limit of
    /// stored pairs per call, a device list's slots).
    PairList {
        /// Pairs found.
        pairs: u64,
        /// Pairs the list may hold.
        allowed: u64,
    },
    /// The memory this process may still use, for a pair list: `pairs` found, their list
    /// needing `needed` bytes against `usable` (when known).
    PairListMemory {
        /// Pairs found (or the room asked for, where a list is sized before its pairs are
        /// counted).
        pairs: u64,
        /// Bytes their list needs.
        needed: u64,
        /// Bytes the process may still use, when known.
        usable: Option<u64>,
    },
}

impl Exceeds {
    /// Whether this is a device size (a binding or buffer too small for this frame): what
    /// smaller parts overcome (`partition`), unlike host memory or a count.
    pub fn is_device_size(self) -> bool {
        matches!(self, Exceeds::Binding { .. } | Exceeds::Buffer { .. })
    }

    /// Whether the pairs found are too many to store (a list's capacity or the memory left for
    /// it): counting them alone, without a list, avoids it.
    ///
    /// ```
    /// use sweepfan::{BroadPhase, Exceeds, Limits, MemoryBudget, Method, Sphere, cpu};
    /// use glam::Vec3;
    ///
    /// // 2,000 spheres at one point: 1,999,000 pairs, 16 MB as a list, past a 1 MiB budget.
    /// let point = vec![Sphere::new(Vec3::ZERO, 1.0); 2000];
    /// let limits = Limits::new().with_memory(MemoryBudget::Bytes(1 << 20));
    /// let mut grid = cpu::broad_phase(Method::Grid);
    /// let stored = limits.run(|| grid.find_pairs(&point, Some(&mut Vec::new())));
    /// let e = stored.unwrap_err();
    /// assert!(e.exceeds().is_some_and(Exceeds::is_pair_list), "{e}");
    /// // Counted alone, they fit.
    /// assert_eq!(limits.run(|| grid.find_pairs(&point, None))?.pairs, 1_999_000);
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn is_pair_list(self) -> bool {
        matches!(
            self,
            Exceeds::PairList { .. } | Exceeds::PairListMemory { .. }
        )
    }
}

impl Error {
    /// The limit this error ran into, where it is an [`Error::TooLarge`] (through any
    /// [`Error::Context`] around one).
    pub fn exceeds(&self) -> Option<Exceeds> {
        match self {
            Error::TooLarge { exceeds, .. } => Some(*exceeds),
            Error::Context { source, .. } => source.exceeds(),
            _ => None,
        }
    }

    /// [`Error::TooLarge`] of `exceeds`, with `message` for people.
    pub fn too_large(exceeds: Exceeds, message: impl Into<String>) -> Self {
        Error::TooLarge {
            exceeds,
            message: message.into(),
        }
    }

    /// [`Error::TooLarge`] of a count past 32-bit indices.
    pub fn past_u32(count: u64, message: impl Into<String>) -> Self {
        Self::too_large(Exceeds::Index32 { count }, message)
    }

    /// [`Error::InvalidArgument`] of `argument`, with `message` for people.
    pub fn invalid_argument(argument: &'static str, message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            argument,
            message: message.into(),
        }
    }

    /// [`Error::AdapterLacks`] of `need`, with `message` for people.
    pub fn adapter_lacks(need: &'static str, message: impl Into<String>) -> Self {
        Error::AdapterLacks {
            need,
            message: message.into(),
        }
    }

    /// [`Error::Gpu`] of `failure`, with `message` for people.
    pub fn gpu(failure: GpuFailure, message: impl Into<String>) -> Self {
        Error::Gpu {
            failure,
            message: message.into(),
        }
    }

    /// [`Error::Io`] of `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// An [`Error::LengthMismatch`] unless `argument` holds as many entries (`given`) as it must
/// (`expected`, one per object); `message` says so for people, made only on the error.
pub(crate) fn check_length(
    argument: &'static str,
    given: usize,
    expected: usize,
    message: impl FnOnce() -> String,
) -> Result<()> {
    if given == expected {
        return Ok(());
    }
    Err(Error::LengthMismatch {
        argument,
        given,
        expected,
        message: message(),
    })
}

/// Longest piece of echoed input [`shown`] keeps, in characters.
pub(crate) const SHOWN_MAX_CHARS: usize = 80;

/// Text from a file or the command line as a message may echo it: control characters escaped
/// (`\r`, `\0`, `\x1b`, ...; a carriage return would otherwise send the terminal back to the start
/// of the line and hide the message), as are invisible format characters (zero-width,
/// bidirectional overrides, a byte-order mark) and whatever else `char::escape_debug` escapes;
/// quotes and backslashes are kept as typed. Longer than `SHOWN_MAX_CHARS` characters, the rest is replaced by `...`.
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
