// Dial-in mode: the bot connects to a referee's BotGateway (proto/abluxxen/v1/gateway.proto) instead of listening.
#pragma once

#include <functional>
#include <string>

#include "abluxxen/v1/bot.pb.h"

namespace cppbot {

struct DialInOptions {
  std::string server;        // HOST:PORT of the referee (abluxx serve)
  std::string token;         // the author's token, sent as 'authorization: Bearer <token>'
  std::string name;          // the entrant's name
  unsigned games_at_once = 1;  // 1 to 64
  bool tls = false;          // TLS with the system's roots, or with root_pem when it is set
  std::string root_pem;      // --tls-ca FILE's contents
};

using Answer = std::function<abluxxen::v1::DecisionReply(const abluxxen::v1::DecisionRequest&)>;

// Dials in and plays every game the referee opens with `answer`, connecting again after a drop (1 s, doubling to
// 30 s). Returns only when the referee refuses the bot for good (a wrong token, a failed validation game, another
// author's name), having said why on stderr.
void DialIn(const DialInOptions& options, const abluxxen::v1::HelloReply& hello, const Answer& answer);

}  // namespace cppbot
