// The bot's strategy: one pure function from a DecisionRequest to an index into its legal_actions.
// Change Choose (or the helpers in strategy.cc) to change how the bot plays; main.cc only transports.
#pragma once

#include "abluxxen/v1/bot.pb.h"

namespace cppbot {

// The index into req.legal_actions() that the bot answers. Throws std::runtime_error when no action is listed.
int Choose(const abluxxen::v1::DecisionRequest& req);

}  // namespace cppbot
