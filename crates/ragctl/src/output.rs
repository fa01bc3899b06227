//! Writing data to stdout, and recognising a reader that went away.

use std::fs::File;
use std::io::{self, Seek as _, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Whether `err` (or anything in its chain) is a write to a closed pipe.
///
/// `serde_json::Error` hides its io error from `source()`, so it is asked directly.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            return io.kind() == io::ErrorKind::BrokenPipe;
        }
        if let Some(json) = cause.downcast_ref::<serde_json::Error>() {
            return json.io_error_kind() == Some(io::ErrorKind::BrokenPipe);
        }
        false
    })
}

/// Shortens `text` to one line of at most `max_chars` characters, for previews.
pub(crate) fn excerpt(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(max_chars + 3);
    let mut last_space = false;
    for (count, ch) in text
        .split_whitespace()
        .flat_map(|w| w.chars().chain(std::iter::once(' ')))
        .enumerate()
    {
        if count >= max_chars {
            out.truncate(out.trim_end().len());
            out.push_str("...");
            return out;
        }
        last_space = ch == ' ';
        out.push(ch);
    }
    if last_space {
        out.pop();
    }
    out
}

/// Output held back until it is complete or its turn comes: in memory up to a limit, then in a
/// temporary file, so holding a file's chunks costs disk (the page cache), not memory. Dropping it
/// discards everything.
pub(crate) struct Spool {
    memory: Vec<u8>,
    memory_limit: usize,
    file: Option<SpoolFile>,
}

struct SpoolFile {
    /// Buffered: the chunks come in many small writes.
    file: io::BufWriter<File>,
    /// Still to remove at drop where the file could not be removed while open.
    path: Option<PathBuf>,
}

impl Drop for SpoolFile {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Spool {
    /// Output kept in memory by a large file's spool before it moves to a temporary file.
    pub(crate) const MEMORY: usize = 8 << 20;

    /// A spool that keeps up to `memory` bytes in memory.
    pub(crate) fn new(memory: usize) -> Self {
        Self {
            memory: Vec::new(),
            memory_limit: memory,
            file: None,
        }
    }

    /// Writes everything spooled to `out`.
    pub(crate) fn copy_to(self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(&self.memory)?;
        if let Some(mut spooled) = self.file {
            spooled.file.flush()?;
            let file = spooled.file.get_mut();
            file.rewind()?;
            io::copy(file, out)?;
        }
        Ok(())
    }

    fn create_file() -> io::Result<SpoolFile> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "ragctl-spool-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|err| io::Error::new(err.kind(), format!("creating {}: {err}", path.display())))?;
        // Where an open file can be removed (Unix), it goes at once: nothing is left behind even
        // if the process is killed.
        let path = std::fs::remove_file(&path).err().map(|_| path);
        Ok(SpoolFile {
            file: io::BufWriter::with_capacity(256 << 10, file),
            path,
        })
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && self.memory.len() + buf.len() <= self.memory_limit {
            self.memory.extend_from_slice(buf);
            return Ok(buf.len());
        }
        let spooled = match &mut self.file {
            Some(spooled) => spooled,
            None => self.file.insert(Self::create_file()?),
        };
        spooled.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(spooled) => spooled.file.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_one_line_and_bounded() {
        assert_eq!(excerpt("# Title\n\nBody  text", 80), "# Title Body text");
        assert_eq!(excerpt("abcdef ghij", 6), "abcdef...");
        assert_eq!(excerpt("", 10), "");
        assert_eq!(excerpt("日本語のテキスト", 3), "日本語...");
    }

    #[test]
    fn broken_pipes_are_recognised_through_context_and_json() {
        let io_err = io::Error::new(io::ErrorKind::BrokenPipe, "closed");
        assert!(is_broken_pipe(&anyhow::Error::new(io_err).context("writing chunks")));
        let json_err = serde_json::Error::io(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
        assert!(is_broken_pipe(&anyhow::Error::new(json_err)));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }

    #[test]
    fn a_spool_returns_what_was_written_across_memory_and_file() {
        let mut spool = Spool::new(Spool::MEMORY);
        let block: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        for _ in 0..10 {
            spool.write_all(&block).unwrap();
        }
        assert!(spool.file.is_some(), "past the memory part, the spool is a file");
        let mut out = Vec::new();
        spool.copy_to(&mut out).unwrap();
        assert_eq!(out.len(), 10 << 20);
        assert!(out.chunks(1 << 20).all(|c| c == block.as_slice()));
    }
}
