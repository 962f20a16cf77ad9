// Atomic output files: written to a temporary file in the same directory, flushed and synced,
// then renamed over the destination, so a reader never sees half a file and a failure (disk
// full, interruption) leaves the previous file, or none, in place.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "sdprl/export.h"

namespace sdprl::io {

// Calls `write` with a stream to a temporary file, then renames it to `file`. Any failure (the
// stream's, or an exception from `write`) removes the temporary file and throws sdprl::Error
// naming `file`. Only a regular file is ever replaced: a character device or FIFO at `file` (also
// through a symbolic link, as /dev/stdout is) is written through, not atomically; "-" writes to
// standard output; any other existing non-regular file (a symbolic link to a regular file, a
// directory, a socket, a block device) is refused.
SDPRL_API void write_atomically(const std::filesystem::path& file,
                                const std::function<void(std::ostream&)>& write);

// One file of write_atomically_together().
struct FileToWrite {
  std::filesystem::path file;
  std::function<void(std::ostream&)> write;
};

// Several files replaced as a set: each is written to its temporary file (as write_atomically
// does, with the same checks) before any is renamed, then they are renamed in the order given. A
// failure while writing leaves every previous file in place and no temporary file.
SDPRL_API void write_atomically_together(const std::vector<FileToWrite>& files);

// Creates `directory` (and parents) and checks that a file can be created in it; throws Error
// naming the directory otherwise.
SDPRL_API void ensure_writable_directory(const std::filesystem::path& directory);

}  // namespace sdprl::io
