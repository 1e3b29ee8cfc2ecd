// Creating files: temporary files, files replaced as a whole, logs and private folders. The rules,
// in one place: a file kernlab creates is created exclusively (O_CREAT | O_EXCL: never an
// existing file, never through a link planted at its name), under a name no one can guess
// beforehand; a file replaced as a whole is written beside its name and renamed over it, so a
// link at the name is replaced itself and its target is left as it was; a log is never opened
// through a link, nor emptied when it belongs to someone else.
#pragma once

#include "core/unique_fd.hpp"

#include <sys/types.h>

#include <string>
#include <string_view>

namespace kl {

/// A file just created, open for writing.
struct created_file {
  unique_fd fd;
  std::string path;
};

/// Creates a new file in the folder of `target`, named `prefix` and random letters (".x.json-
/// 3hQk9ZbT0aLm"), exclusively, with `mode` less the umask. Throws io_error naming the folder.
created_file create_file_beside(const std::string& target, const std::string& prefix,
                                mode_t mode = 0644);

/// Writes `bytes` to a new file beside `path` and renames it over `path`: a reader sees the old
/// file or the new one, never a part. Throws io_error naming the file (the new file is removed).
void replace_file(const std::string& path, std::string_view bytes, mode_t mode = 0644);

/// What open_appending does with a regular file already at the path.
enum class existing { keep, empty };

/// Opens `path` for appending (a journal, a log, the tuning store), creating it with `mode` less
/// the umask. Never through a symbolic link at the name, never waiting for a FIFO's reader
/// (O_NONBLOCK, cleared once open), and a regular file of another user is neither emptied nor
/// written; a device (/dev/null, /dev/full) is written as it is. Throws io_error("<what> PATH:
/// why") naming the file.
unique_fd open_appending(const std::string& what, const std::string& path, existing what_is_there,
                         mode_t mode = 0644);

/// A new folder only this user may enter (mode 0700), "<system temp folder>/<prefix>XXXXXX".
/// Throws io_error.
std::string make_private_folder(const std::string& prefix);

/// Every byte of `bytes` to `fd`; 0, or the errno of the write that failed.
int write_all(int fd, std::string_view bytes);

}  // namespace kl
