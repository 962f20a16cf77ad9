// Atomic output files: temporary file in the same directory, flush, fsync, rename.
#include "sdprl/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "sdprl/error.h"

namespace sdprl::io {
namespace {

std::atomic<unsigned long> g_counter{0};

std::string unique_suffix() {
  return std::to_string(static_cast<long>(::getpid())) + "." + std::to_string(g_counter++);
}

std::string errno_text(int err) {
  return err != 0 ? std::string(std::strerror(err)) : std::string("unknown error");
}

void remove_quietly(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::remove(p, ec);
}

// fsync() a file (or directory) by path; returns 0 or an errno value.
int sync_path(const std::filesystem::path& p, int flags) {
  int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = 0;
  if (::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  return err;
}

// Writes straight into a stream that is not a file to replace (a character device, a FIFO,
// standard output): what `sort -o` or `cp` do there. Not atomic: a stream has no "previous
// version" to keep.
void write_through(std::ostream& out, const std::function<void(std::ostream&)>& write,
                   const std::function<Error(const std::string&)>& fail) {
  errno = 0;
  try {
    write(out);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw fail(e.what());
  }
  out.flush();
  if (!out) {
    const int err = errno;
    throw fail(std::string("error writing") + (err != 0 ? ": " + errno_text(err) : std::string()));
  }
}

std::string kind_of(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::directory: return "a directory";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::socket: return "a socket";
    case std::filesystem::file_type::symlink: return "a symbolic link";
    default: return "not a regular file";
  }
}

}  // namespace

namespace {

Error write_failure(const std::filesystem::path& file, const std::string& reason) {
  return Error(file.string(), "cannot write: " + reason);
}

// The first half of write_atomically(): `write` into a temporary file beside `file`, flushed,
// closed and synced; returns its path (empty when `file` was written through: a device, a FIFO,
// standard output). Any failure removes the temporary file and throws.
std::filesystem::path write_temporary(const std::filesystem::path& file,
                                      const std::function<void(std::ostream&)>& write) {
  auto fail = [&](const std::string& reason) -> Error { return write_failure(file, reason); };
  if (!file.has_filename()) throw fail("the path names no file");

  // Only a regular file (or none) is replaced by the rename below: renaming over /dev/stdout, a
  // device node, a FIFO or a symbolic link would put a regular file in its place. Devices and
  // FIFOs (and "-", standard output) are written through instead, as Unix tools do; anything else
  // that exists is refused.
  if (file == "-") {
    write_through(std::cout, write, fail);
    return {};
  }
  std::error_code ec;
  const std::filesystem::file_status link = std::filesystem::symlink_status(file, ec);
  if (!ec && link.type() != std::filesystem::file_type::not_found && link.type() != std::filesystem::file_type::regular) {
    const std::filesystem::file_status target = std::filesystem::status(file, ec);
    if (!ec && (target.type() == std::filesystem::file_type::character ||
                target.type() == std::filesystem::file_type::fifo)) {
      std::ofstream stream(file, std::ios::out | std::ios::binary);
      if (!stream.is_open()) throw fail("cannot open it for writing: " + errno_text(errno));
      write_through(stream, write, fail);
      return {};
    }
    throw fail("it is " + kind_of(link.type()) +
               (link.type() == std::filesystem::file_type::symlink && !ec && target.type() == std::filesystem::file_type::regular
                    ? " to a regular file; sdprl replaces only regular files: give the target's own path"
                    : "; sdprl replaces only regular files"));
  }

  const std::filesystem::path tmp =
      file.parent_path() / (file.filename().string() + ".tmp." + unique_suffix());

  std::ofstream out;
  errno = 0;
  out.open(tmp, std::ios::out | std::ios::binary | std::ios::trunc);
  if (!out.is_open()) {
    const int err = errno;
    throw fail("cannot create temporary file '" + tmp.string() + "': " + errno_text(err));
  }

  int write_errno = 0;  // the reason of a write that failed inside `write` (ENOSPC, EFBIG, ...)
  try {
    errno = 0;
    write(out);
    if (!out) write_errno = errno;
  } catch (const Error&) {
    out.close();
    remove_quietly(tmp);
    throw;
  } catch (const std::exception& e) {
    out.close();
    remove_quietly(tmp);
    throw fail(e.what());
  } catch (...) {
    out.close();
    remove_quietly(tmp);
    throw fail("unknown exception while writing");
  }

  errno = 0;
  out.flush();
  if (!out) {
    const int err = write_errno != 0 ? write_errno : errno;
    out.close();
    remove_quietly(tmp);
    throw fail("error writing temporary file '" + tmp.string() + "'" +
               (err != 0 ? ": " + errno_text(err) : std::string()));
  }
  errno = 0;
  out.close();
  if (out.fail()) {
    const int err = errno;
    remove_quietly(tmp);
    throw fail("error closing temporary file '" + tmp.string() + "'" +
               (err != 0 ? ": " + errno_text(err) : std::string()));
  }

  if (int err = sync_path(tmp, O_WRONLY); err != 0) {
    remove_quietly(tmp);
    throw fail("cannot sync temporary file '" + tmp.string() + "': " + errno_text(err));
  }

  return tmp;
}

// The second half: the temporary file renamed over `file` (nothing for a file written through).
void replace_with(const std::filesystem::path& tmp, const std::filesystem::path& file) {
  if (tmp.empty()) return;
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    remove_quietly(tmp);
    throw write_failure(file, "cannot rename temporary file '" + tmp.string() + "': " + ec.message());
  }
  // Make the rename itself durable; best effort (not every file system supports it).
  const std::filesystem::path dir = file.parent_path().empty() ? "." : file.parent_path();
  (void)sync_path(dir, O_RDONLY | O_DIRECTORY);
}

}  // namespace

void write_atomically(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write) {
  replace_with(write_temporary(file, write), file);
}

void write_atomically_together(const std::vector<FileToWrite>& files) {
  // Every temporary file first: a failure in any (a full disk, a size limit, a directory where a
  // file should be) removes those written so far and leaves every previous file as it was, where
  // writing them one by one left a new X.mtx beside the previous run's summary.json.
  std::vector<std::filesystem::path> temporaries;
  try {
    for (const FileToWrite& f : files) temporaries.push_back(write_temporary(f.file, f.write));
  } catch (...) {
    for (const std::filesystem::path& tmp : temporaries)
      if (!tmp.empty()) remove_quietly(tmp);
    throw;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    try {
      replace_with(temporaries[i], files[i].file);
    } catch (...) {
      for (std::size_t j = i + 1; j < files.size(); ++j)
        if (!temporaries[j].empty()) remove_quietly(temporaries[j]);
      throw;
    }
  }
}

void ensure_writable_directory(const std::filesystem::path& directory) {
  const std::filesystem::path dir = directory.empty() ? std::filesystem::path(".") : directory;
  const std::string where = directory.string();
  auto fail = [&](const std::string& reason) -> Error {
    return Error(where, "output directory is not writable: " + reason);
  };

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw fail("cannot create it: " + ec.message());
  if (!std::filesystem::is_directory(dir, ec)) {
    throw fail(ec ? ec.message() : std::string("it exists and is not a directory"));
  }

  const std::filesystem::path probe = dir / (".sdprl_write_probe." + unique_suffix());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    throw fail("cannot create a file in it: " + errno_text(err));
  }
  ::close(fd);
  std::filesystem::remove(probe, ec);
  if (ec) throw fail("cannot remove the probe file '" + probe.string() + "': " + ec.message());
}

}  // namespace sdprl::io
