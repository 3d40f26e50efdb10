// An Abluxxen bot in C++: serves the abluxxen.v1.Bot gRPC service (proto/abluxxen/v1/bot.proto) on both
// transports and answers every decision with the strategy in strategy.cc.
//
//   cppbot --port P [--host 127.0.0.1]     (port 0 picks a free port)
//   ABLUXX_LISTEN=unix:PATH cppbot         (a sandbox's Unix socket, docs/sandbox.md; no --port needed)
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "abluxxen/v1/bot.grpc.pb.h"
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

class BotService final : public abluxxen::v1::Bot::Service {
  Status Hello(ServerContext*, const abluxxen::v1::HelloRequest*, abluxxen::v1::HelloReply* out) override {
    out->set_name(kName);
    out->set_version(kVersion);
    out->set_author("Abluxxen referee project");
    out->set_protocol_version(abluxxen::v1::PROTOCOL_VERSION_1);
    out->add_transports(abluxxen::v1::TRANSPORT_UNARY);
    out->add_transports(abluxxen::v1::TRANSPORT_STREAM);
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
  std::cerr << "cppbot: " << why << "\nusage: cppbot --port P [--host 127.0.0.1]" << std::endl;
  std::exit(2);
}

int ParsePort(const std::string& text) {
  size_t used = 0;
  int port = -1;
  try {
    port = std::stoi(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || port < 0 || port > 65535) {
    Usage("--port must be an integer from 0 to 65535, got \"" + text + "\"");
  }
  return port;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  int port = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--port" || arg == "--host") && i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "--port") port = ParsePort(value);
      else host = value;
    } else {
      Usage("unknown argument \"" + arg + "\"");
    }
  }
  const char* listen_env = std::getenv("ABLUXX_LISTEN");
  const std::string unix_socket = listen_env ? listen_env : "";
  if (port < 0 && unix_socket.empty()) Usage("--port is required (0 picks a free port)");

  // SIGINT and SIGTERM are blocked here, before gRPC starts its threads, and waited for below: a clean stop.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const std::string address = (host.find(':') != std::string::npos ? "[" + host + "]" : host);
  BotService service;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int bound = 0;
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
