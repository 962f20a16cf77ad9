// Internal: reading a data file that may be compressed. The compression is decided by the file's
// extension (".gz": gzip, ".bz2": bzip2, case-insensitive; anything else is read as it is), and
// decompression is done by Boost.Iostreams while the file is read, so nothing is unpacked to disk.
#pragma once

#include <filesystem>
#include <istream>
#include <memory>
#include <string>

namespace sdprl::io::detail {

enum class Compression { none, gzip, bzip2 };

// The compression implied by the extension of `file`.
Compression compression_of(const std::filesystem::path& file);

// Opens `file` for reading with decompression according to its extension. The stream throws (its
// exception mask includes badbit) when the compressed data is corrupt or a read fails; LineInput
// turns that into an sdprl::Error naming the file and line. Throws Error(file, "cannot open
// file...") when the file cannot be opened or is a directory.
std::unique_ptr<std::istream> open_input(const std::filesystem::path& file);

// Line-by-line reading of a (possibly compressed) file: counts lines, drops a trailing '\r' and a
// UTF-8 byte order mark, and reports errors as "file:line:column: message".
class LineInput {
 public:
  explicit LineInput(const std::filesystem::path& file);
  // Reads `in` (not owned, read as it is) and names it `name` in messages.
  LineInput(std::istream& in, std::string name);
  ~LineInput();
  LineInput(const LineInput&) = delete;
  LineInput& operator=(const LineInput&) = delete;

  // The next line, or false at the end of the file. A corrupt compressed stream or a read error
  // throws Error(file:line, ...) naming the last line read.
  bool next(std::string& line);

  long line() const { return line_; }
  const std::string& path() const { return path_; }

  // Throws Error(file:line:column, message) at the current line (column 0: no column).
  [[noreturn]] void fail(const std::string& message, long column = 0) const;

 private:
  std::string path_;
  std::unique_ptr<std::istream> owned_;
  std::istream* in_ = nullptr;
  long line_ = 0;
};

}  // namespace sdprl::io::detail
