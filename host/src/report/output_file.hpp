// Writing an output file (--json, --csv, plot -o) so that it is either complete or not there:
// the text goes to a temporary file in the same folder, is flushed to the disk, and is renamed
// over the destination. A write that fails (a full disk, a read-only folder, a file size limit)
// throws kl::io_error naming the file and leaves any previous file untouched.
#pragma once

#include <string>

namespace kl {

/// Writes `text` to `path` as a whole. "-" and /dev/stdout (and /dev/stderr) write to the
/// process's own stream; a path that exists and is not a regular file (a FIFO, a device such as
/// /dev/null, or a link to one) cannot be renamed over, so it is written directly, every write
/// checked. A symbolic link to a regular file (or to nothing) is replaced itself, never the file
/// it points at. Throws io_error("PATH: why") on any failure.
void write_output_file(const std::string& path, const std::string& text);

/// Whether an output path names the process's standard output ("-", /dev/stdout).
bool is_standard_output(const std::string& path);

/// Whether an output path is a stream rather than a file to replace: standard output or error,
/// or something there that is not a regular file (a FIFO, a device). A stream takes one write of
/// the whole: the rewrites a run makes of a file while it goes on would reach it as several
/// documents.
bool is_stream_output(const std::string& path);

}  // namespace kl
