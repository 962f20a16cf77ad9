// Application: a plugin that reads its TOML table ([model]) and its data and builds a Model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "sdprl/config.h"
#include "sdprl/export.h"
#include "sdprl/model.h"

namespace sdprl {

struct BuildContext {
  std::uint64_t seed = 1;  // the run's seed (solver.seed) for generators that need one
};

class SDPRL_API Application {
 public:
  virtual ~Application();
  virtual std::string name() const = 0;
  // Builds the model from the [model] table. Data errors throw sdprl::Error with file:line.
  virtual Model build(const ConfigTable& table, const BuildContext& context) const = 0;
};

}  // namespace sdprl
