// Fuzz target: the TOML model loader (sdprl::ConfigTable). The input is a model file, optionally
// followed by a NUL byte and "KEY=VALUE" lines applied as --set overrides. Every key of every
// table is then read in each typed form the runner and the plugins use, as they would read it,
// and the unknown-key check runs; each read either succeeds or throws a located sdprl::Error.
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_input.h"
#include "sdprl/config.h"

namespace {

using sdprl::ConfigTable;
using sdprl::NumberRule;
using sdprl::fuzz::expect_clean_refusal;

void read_everything(const ConfigTable& table, int depth) {
  if (depth > 8) return;
  std::size_t k = 0;
  for (const std::string& key : table.keys()) {
    if (!table.contains(key)) std::abort();  // keys() lists exactly what is there
    if (table.where(key).empty()) std::abort();
    if (table.is_table(key)) {
      expect_clean_refusal([&] { read_everything(table.table(key), depth + 1); });
      continue;
    }
    // One typed read per key (a refusal costs an exception), the form varying along the table,
    // so that every form meets every kind of value across the corpus.
    switch (k++ % 8) {
      case 0: expect_clean_refusal([&] { table.number(key, 0.0, NumberRule::positive()); }); break;
      case 1: expect_clean_refusal([&] { table.integer(key, 0, NumberRule::closed(1, 1e9)); }); break;
      case 2: expect_clean_refusal([&] { table.boolean(key, false); }); break;
      case 3: expect_clean_refusal([&] { table.string(key, "", {"auto", "mm", "lbfgs"}); }); break;
      case 4: expect_clean_refusal([&] { table.numbers(key, {}, NumberRule::non_negative()); }); break;
      case 5: expect_clean_refusal([&] { table.file(key); }); break;
      case 6: expect_clean_refusal([&] { table.require_string(key); }); break;
      default: expect_clean_refusal([&] { table.table(key); }); break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view text = input.substr(0, nul);
  expect_clean_refusal([&] {
    ConfigTable config = ConfigTable::parse_string(text, "model.toml");
    if (nul != std::string_view::npos) {
      std::string_view rest = input.substr(nul + 1);
      while (!rest.empty()) {
        const std::size_t eol = rest.find('\n');
        const std::string_view line = rest.substr(0, eol);
        const std::size_t eq = line.find('=');
        if (eq != std::string_view::npos) {
          expect_clean_refusal([&] { config.set(line.substr(0, eq), line.substr(eq + 1)); });
        }
        if (eol == std::string_view::npos) break;
        rest.remove_prefix(eol + 1);
      }
    }
    read_everything(config, 0);
    config.check_unknown_keys();
    config.table("absent").require_string("type");  // always refused: a missing key
  });
  return 0;
}
