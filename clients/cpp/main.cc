// An Abluxxen bot in C++: serves the abluxxen.v1.Bot gRPC service (proto/abluxxen/v1/bot.proto) on both
// transports and answers every decision with the strategy in strategy.cc.
//
//   cppbot --port P [--host 127.0.0.1]     (port 0 picks a free port)
//   cppbot --connect HOST:PORT --token T [--as NAME] [--games-at-once N] [--tls] [--tls-ca FILE]
//                                          (dial in to a referee's BotGateway instead: dialin.cc)
//   ABLUXX_LISTEN=unix:PATH cppbot         (a sandbox's Unix socket, docs/sandbox.md; no --port needed)
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "abluxxen/v1/bot.grpc.pb.h"
#include "dialin.h"
#include "strategy.h"

namespace {

using abluxxen::v1::DecisionReply;
using abluxxen::v1::DecisionRequest;
using abluxxen::v1::RefereeMessage;
using grpc::ServerContext;
using grpc::Status;

constexpr const char* kName = "cpp-largest";
constexpr const char* kVersion = "0.1.0";
constexpr size_t kMaxErrorChars = 200;  // bot.proto DecisionReply.error: the referee keeps no more than this

// A reply with no action that says why, as "Type: message" (at most 200 characters); the details go to stderr.
void Failed(const DecisionRequest& req, const char* type, const std::exception& e, DecisionReply* reply) {
  std::cerr << "strategy failed on seq " << req.seq() << " of game " << req.game_id() << ": " << e.what() << std::endl;
  reply->set_error(std::string(type) + ": " + e.what());
  if (reply->error().size() > kMaxErrorChars) reply->mutable_error()->resize(kMaxErrorChars);
}

// The reply to one request. A strategy bug answers no action and says why in `error`, as bot.proto asks: the
// referee records it in the fault (one strike) and its fallback plays the decision.
DecisionReply Reply(const DecisionRequest& req) {
  DecisionReply reply;
  reply.set_game_id(req.game_id());
  reply.set_seq(req.seq());
  try {
    reply.set_index(static_cast<uint32_t>(cppbot::Choose(req)));
  } catch (const std::runtime_error& e) {
    Failed(req, "runtime_error", e, &reply);
  } catch (const std::exception& e) {
    Failed(req, "exception", e, &reply);
  }
  return reply;
}

// The bot's Hello, served on Bot.Hello and sent in its DialIn.
abluxxen::v1::HelloReply MakeHello() {
  abluxxen::v1::HelloReply hello;
  hello.set_name(kName);
  hello.set_version(kVersion);
  hello.set_author("Abluxxen referee project");
  hello.set_protocol_version(abluxxen::v1::PROTOCOL_VERSION_1);
  hello.add_transports(abluxxen::v1::TRANSPORT_UNARY);
  hello.add_transports(abluxxen::v1::TRANSPORT_STREAM);
  return hello;
}

class BotService final : public abluxxen::v1::Bot::Service {
  Status Hello(ServerContext*, const abluxxen::v1::HelloRequest*, abluxxen::v1::HelloReply* out) override {
    *out = MakeHello();
    return Status::OK;
  }

  Status Decide(ServerContext*, const DecisionRequest* req, DecisionReply* out) override {
    *out = Reply(*req);
    return Status::OK;
  }

  // One stream per game and seat: start, then decisions (one reply each, in order), then game_over; the
  // referee then closes its side and returning closes ours.
  Status Play(ServerContext*, grpc::ServerReaderWriter<DecisionReply, RefereeMessage>* stream) override {
    RefereeMessage msg;
    while (stream->Read(&msg)) {
      if (msg.has_decision() && !stream->Write(Reply(msg.decision()))) break;
    }
    return Status::OK;
  }

  Status GameOver(ServerContext*, const abluxxen::v1::GameOverNotice*, abluxxen::v1::GameOverAck*) override {
    return Status::OK;
  }
};

[[noreturn]] void Usage(const std::string& why) {
  std::cerr << "cppbot: " << why << "\nusage: cppbot --port P [--host 127.0.0.1] | --connect HOST:PORT --token T"
            << std::endl;
  std::exit(2);
}

// `text` as an integer from `low` to `high`, or the usage error naming `flag`.
int ParseInt(const std::string& flag, const std::string& text, int low, int high) {
  size_t used = 0;
  int value = low - 1;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || value < low || value > high) {
    Usage(flag + " must be an integer from " + std::to_string(low) + " to " + std::to_string(high) + ", got \"" +
          text + "\"");
  }
  return value;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) Usage("--tls-ca: cannot read \"" + path + "\"");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Args {
  std::string host = "127.0.0.1";
  int port = -1;
  std::string unix_socket;  // ABLUXX_LISTEN, set by a sandbox: serve there
  cppbot::DialInOptions dial;
};

Args Parse(int argc, char** argv) {
  Args a;
  a.dial.name = kName;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--tls") {
      a.dial.tls = true;
      continue;
    }
    if (i + 1 >= argc) Usage("unknown argument, or one without its value: \"" + arg + "\"");
    std::string value = argv[++i];
    if (arg == "--port") a.port = ParseInt("--port", value, 0, 65535);
    else if (arg == "--host") a.host = value;
    else if (arg == "--connect") a.dial.server = value;
    else if (arg == "--token") a.dial.token = value;
    else if (arg == "--as") a.dial.name = value;
    else if (arg == "--games-at-once") a.dial.games_at_once = ParseInt("--games-at-once", value, 1, 64);
    else if (arg == "--tls-ca") a.dial.root_pem = ReadFile(value);
    else Usage("unknown argument \"" + arg + "\"");
    if (arg == "--tls-ca") a.dial.tls = true;
  }
  if (!a.dial.server.empty() && a.dial.token.empty()) Usage("--connect needs the author's token: --token T");
  const char* listen_env = std::getenv("ABLUXX_LISTEN");
  a.unix_socket = listen_env ? listen_env : "";
  if (a.dial.server.empty() && a.port < 0 && a.unix_socket.empty()) {
    Usage("--port is required (0 picks a free port), or --connect HOST:PORT");
  }
  return a;
}

// Dial in until SIGINT or SIGTERM (exit 0) or a final refusal (exit 1).
[[noreturn]] void DialInMain(const cppbot::DialInOptions& dial, sigset_t stop_signals) {
  std::thread([stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::cout.flush();
    std::_Exit(0);
  }).detach();
  cppbot::DialIn(dial, MakeHello(), Reply);
  std::cout.flush();
  std::_Exit(1);  // gRPC's threads and the games' are not joined: nothing is left to finish
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = Parse(argc, argv);
  const std::string& host = args.host;
  const int port = args.port;

  // SIGINT and SIGTERM are blocked here, before gRPC starts its threads, and waited for below: a clean stop.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  if (!args.dial.server.empty()) DialInMain(args.dial, stop_signals);

  const std::string address = (host.find(':') != std::string::npos ? "[" + host + "]" : host);
  BotService service;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int bound = 0;
  const std::string& unix_socket = args.unix_socket;
  const std::string target = unix_socket.empty() ? address + ":" + std::to_string(port) : unix_socket;
  builder.AddListeningPort(target, grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound == 0) {
    std::cerr << "cppbot: cannot listen on " << target << std::endl;
    return 1;
  }
  std::cout << "listening on " << (unix_socket.empty() ? address + ":" + std::to_string(bound) : target) << std::endl;

  int sig = 0;
  sigwait(&stop_signals, &sig);
  // Calls still open (a referee may hold a stream) get a second to finish, then are cancelled.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}
