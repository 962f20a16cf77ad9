// l1 loss: phi(a) = a, the loss of the convex problem (sdprl/l1_loss.h).
#include "sdprl/l1_loss.h"
#include "sdprl/plugin.h"

namespace {

std::unique_ptr<sdprl::Loss> make(const sdprl::ConfigTable&) { return std::make_unique<sdprl::L1Loss>(); }

}  // namespace

SDPRL_LOSS_PLUGIN("l1", "1.0", "l1 loss phi(a) = a (convex; the SDP in Z is convex)", make)
