// The client side of BotGateway: Connect, answer its Hello with a DialIn, and play each OpenGame on a Play call of
// its own with the same replies as a hosted bot's Play stream (docs/dial-in.md, "The protocol").
#include "dialin.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include "abluxxen/v1/gateway.grpc.pb.h"

namespace cppbot {
namespace {

using abluxxen::v1::BotGateway;
using abluxxen::v1::GatewayMessage;

constexpr int kFirstRetryS = 1;
constexpr int kMaxRetryS = 30;

// A status code's name, as in gRPC's docs (UNAUTHENTICATED, ...).
const char* CodeName(grpc::StatusCode code) {
  static const char* const kNames[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
      "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  int i = static_cast<int>(code);
  return i >= 0 && i < 17 ? kNames[i] : "UNKNOWN";
}

// The referee's answers that no retry can change: the bot stops and says why.
bool Final(grpc::StatusCode code) {
  static const std::set<grpc::StatusCode> kFinal = {
      grpc::StatusCode::UNAUTHENTICATED, grpc::StatusCode::PERMISSION_DENIED, grpc::StatusCode::INVALID_ARGUMENT,
      grpc::StatusCode::FAILED_PRECONDITION, grpc::StatusCode::ALREADY_EXISTS};
  return kFinal.count(code) > 0;
}

std::shared_ptr<grpc::Channel> Channel(const DialInOptions& o) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);  // a silent connection is found, as the referee's own pings do
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  // newer gRPC cores (1.85, in Python's grpcio) wait for a ping's answer as long as ping_timeout (60 s by default)
  // whatever the keepalive timeout says; older ones (Debian's 1.51) ignore this name and honour the line above
  args.SetInt("grpc.http2.ping_timeout_ms", 10000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxRetryS * 1000);  // gRPC's own waits no longer than ours
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (o.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = o.root_pem;  // empty: the system's roots
    creds = grpc::SslCredentials(ssl);
  }
  return grpc::CreateCustomChannel(o.server, creds, args);
}

void Authorize(grpc::ClientContext* ctx, const std::string& token) {
  ctx->AddMetadata("authorization", "Bearer " + token);
}

// One game on its own Play call: GameStart, a reply per DecisionRequest, and our side closed after GameOverNotice.
void PlayGame(std::shared_ptr<BotGateway::Stub> stub, std::string token, std::string ticket, Answer answer) {
  grpc::ClientContext ctx;
  Authorize(&ctx, token);
  ctx.AddMetadata("abluxx-ticket", ticket);
  auto game = stub->Play(&ctx);
  abluxxen::v1::RefereeMessage msg;
  while (game->Read(&msg)) {
    if (msg.has_decision() && !game->Write(answer(msg.decision()))) break;
    if (msg.has_game_over()) break;
  }
  game->WritesDone();
  grpc::Status status = game->Finish();
  if (!status.ok()) std::cerr << "cppbot: a game ended early: " << status.error_message() << std::endl;
}

// One connection, until it ends: its status.
grpc::Status Connection(const std::shared_ptr<BotGateway::Stub>& stub, const DialInOptions& o,
                        const abluxxen::v1::HelloReply& hello, const Answer& answer, bool* entered) {
  grpc::ClientContext ctx;
  Authorize(&ctx, o.token);
  auto call = stub->Connect(&ctx);
  GatewayMessage msg;
  while (call->Read(&msg)) {
    if (msg.has_hello()) {
      abluxxen::v1::DialIn dial;
      dial.set_name(o.name);
      *dial.mutable_hello() = hello;
      dial.set_games_at_once(o.games_at_once);
      call->Write(dial);
    } else if (msg.has_entered()) {
      *entered = true;
      std::cout << "dialled in as " << msg.entered().entrant() << std::endl;
    } else if (msg.has_open_game()) {
      std::thread(PlayGame, stub, o.token, msg.open_game().ticket(), answer).detach();
    }
  }
  return call->Finish();
}

}  // namespace

void DialIn(const DialInOptions& o, const abluxxen::v1::HelloReply& hello, const Answer& answer) {
  std::shared_ptr<BotGateway::Stub> stub = BotGateway::NewStub(Channel(o));
  int wait = kFirstRetryS;
  for (;;) {
    bool entered = false;
    grpc::Status status = Connection(stub, o, hello, answer, &entered);
    if (Final(status.error_code())) {
      std::cerr << "cppbot: the referee refused the bot: " << CodeName(status.error_code()) << ": "
                << status.error_message() << std::endl;
      return;
    }
    if (entered) wait = kFirstRetryS;  // it had been in: the next drop waits from the start again
    std::cerr << "cppbot: the connection to " << o.server << " ended (" << CodeName(status.error_code()) << ": "
              << status.error_message() << "); again in " << wait << " s" << std::endl;
    std::this_thread::sleep_for(std::chrono::seconds(wait));
    wait = std::min(kMaxRetryS, wait * 2);
  }
}

}  // namespace cppbot
