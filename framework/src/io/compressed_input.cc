// Transparent .gz / .bz2 input with Boost.Iostreams (see compressed_input.h).
#include "io/compressed_input.h"

#include <boost/iostreams/device/file.hpp>
#include <boost/iostreams/filter/bzip2.hpp>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filtering_stream.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <exception>
#include <ios>
#include <string>
#include <system_error>
#include <utility>

#include "sdprl/error.h"

namespace sdprl::io::detail {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::gzip: return "gzip";
    case Compression::bzip2: return "bzip2";
    case Compression::none: break;
  }
  return "plain";
}

// What a decompression error means, in words.
std::string describe(const boost::iostreams::gzip_error& e) {
  namespace bio = boost::iostreams;
  const int code = e.error();
  if (code == bio::gzip::zlib_error) {
    const int z = e.zlib_error_code();
    if (z == bio::zlib::buf_error) return "the compressed data ends too early (truncated file?)";
    if (z == bio::zlib::data_error) return "the compressed data is corrupt";
    if (z == bio::zlib::mem_error) return "out of memory";
    return "zlib error " + std::to_string(z);
  }
  if (code == bio::gzip::bad_header) return "not gzip data (bad header)";
  if (code == bio::gzip::bad_footer) return "bad gzip footer (truncated or corrupt file?)";
  if (code == bio::gzip::bad_crc) return "CRC check failed: the data is corrupt";
  if (code == bio::gzip::bad_length) return "length check failed: the data is corrupt";
  return "gzip error " + std::to_string(code);
}

std::string describe(const boost::iostreams::bzip2_error& e) {
  namespace bio = boost::iostreams;
  const int code = e.error();
  if (code == bio::bzip2::unexpected_eof) {
    return "the compressed data ends too early (truncated file?)";
  }
  if (code == bio::bzip2::data_error_magic) return "not bzip2 data (bad header)";
  if (code == bio::bzip2::data_error) return "the compressed data is corrupt";
  if (code == bio::bzip2::mem_error) return "out of memory";
  return "bzip2 error " + std::to_string(code);
}

}  // namespace

Compression compression_of(const std::filesystem::path& file) {
  const std::string ext = lower(file.extension().string());
  if (ext == ".gz") return Compression::gzip;
  if (ext == ".bz2") return Compression::bzip2;
  return Compression::none;
}

std::unique_ptr<std::istream> open_input(const std::filesystem::path& file) {
  namespace bio = boost::iostreams;
  const std::string path = file.string();
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    throw Error(path, "cannot open file: it is a directory");
  }
  errno = 0;
  bio::file_source source(path, std::ios::in | std::ios::binary);
  if (!source.is_open()) {
    const int err = errno;
    throw Error(path, std::string("cannot open file") +
                          (err != 0 ? std::string(": ") + std::strerror(err) : std::string()));
  }
  auto in = std::make_unique<bio::filtering_istream>();
  switch (compression_of(file)) {
    case Compression::gzip: in->push(bio::gzip_decompressor()); break;
    case Compression::bzip2: in->push(bio::bzip2_decompressor()); break;
    case Compression::none: break;
  }
  in->push(source);
  // Decompression errors are thrown by the filters; with badbit in the mask the stream passes
  // them on instead of only setting badbit, so that the message can say what went wrong.
  in->exceptions(std::ios::badbit);
  return in;
}

LineInput::LineInput(const std::filesystem::path& file)
    : path_(file.string()), owned_(open_input(file)), in_(owned_.get()) {}

LineInput::LineInput(std::istream& in, std::string name) : path_(std::move(name)), in_(&in) {}

LineInput::~LineInput() = default;

bool LineInput::next(std::string& line) {
  // A failure is reported at the last line read (or at the file, before the first line).
  auto failed = [this](const std::string& reading, const std::string& detail) {
    return Error(format_location(path_, line_),
                 reading + (line_ > 0 ? " after this line: " : ": ") + detail);
  };
  try {
    if (!std::getline(*in_, line)) {
      // A stream without badbit in its exception mask (one given by the caller) reports here.
      if (in_->bad()) throw failed("read error", "the stream failed");
      return false;
    }
  } catch (const boost::iostreams::gzip_error& e) {
    throw failed("cannot decompress gzip data", describe(e));
  } catch (const boost::iostreams::bzip2_error& e) {
    throw failed("cannot decompress bzip2 data", describe(e));
  } catch (const std::exception& e) {
    const Compression c = compression_of(path_);
    const std::string what = e.what();
    throw failed(c == Compression::none
                     ? std::string("read error")
                     : std::string("cannot decompress ") + compression_name(c) + " data",
                 what.empty() ? std::string("unknown error") : what);
  }
  ++line_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line_ == 1 && line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  return true;
}

void LineInput::fail(const std::string& message, long column) const {
  throw Error(format_location(path_, line_, column), message);
}

}  // namespace sdprl::io::detail
