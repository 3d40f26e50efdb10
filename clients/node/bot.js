#!/usr/bin/env node
// An Abluxxen bot in JavaScript: serves the abluxxen.v1.Bot gRPC service (proto/abluxxen/v1/bot.proto) on both
// transports and answers every decision with the strategy in strategy.js.
//
//   node bot.js --port P [--host 127.0.0.1]     (port 0 picks a free port)
//   node bot.js --connect SERVER --token T [--as NAME] [--games-at-once N] [--tls] [--tls-ca FILE]
//                                               (dial in to a referee's BotGateway instead: see dialIn below)
//   node bot.js --host unix:PATH                (a Unix socket; ABLUXX_LISTEN=unix:PATH, as a sandbox sets, wins)
'use strict';

const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { choose } = require('./strategy');
const { version } = require('./package.json');

const PROTO_DIR = path.join(__dirname, '..', '..', 'proto');

// keepCase: field names as in the .proto; enums as names; uint64 (seq) as strings, echoed back unchanged;
// oneofs: each oneof's member name in a field of its own (see strategy.js).
const definition = protoLoader.loadSync(['abluxxen/v1/bot.proto', 'abluxxen/v1/gateway.proto'], {
  includeDirs: [PROTO_DIR],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const { Bot, BotGateway } = grpc.loadPackageDefinition(definition).abluxxen.v1;

const HELLO = {
  name: 'node-largest',
  version,
  author: 'Abluxxen referee project',
  protocol_version: 'PROTOCOL_VERSION_1',
  transports: ['TRANSPORT_UNARY', 'TRANSPORT_STREAM'],
};

const MAX_ERROR_CHARS = 200; // bot.proto DecisionReply.error: the referee keeps no more than this

// The reply to one DecisionRequest. A strategy bug answers no action and says what went wrong in the reply's
// error field ("TypeError: ..."), as bot.proto asks: the referee records it in the fault, which costs one strike,
// and its fallback plays the decision; the stack goes to stderr.
function reply(req) {
  try {
    return { game_id: req.game_id, seq: req.seq, index: choose(req) };
  } catch (err) {
    console.error(`strategy failed on seq ${req.seq} of game ${req.game_id}: ${err.stack}`);
    const error = `${err.name || 'Error'}: ${err.message}`.slice(0, MAX_ERROR_CHARS);
    return { game_id: req.game_id, seq: req.seq, error };
  }
}

const service = {
  Hello(call, callback) {
    callback(null, HELLO);
  },
  Decide(call, callback) {
    callback(null, reply(call.request));
  },
  // One stream per game and seat: GameStart, then decisions (one reply each), then GameOverNotice.
  Play(call) {
    call.on('data', (msg) => {
      if (msg.message === 'decision') call.write(reply(msg.decision));
    });
    call.on('end', () => call.end());
    call.on('error', () => {}); // the referee cancelled the stream; nothing to clean up
  },
  GameOver(call, callback) {
    callback(null, {});
  },
};

// Dial in (proto/abluxxen/v1/gateway.proto): connect to the referee's BotGateway with an author's token, answer
// its Hello with a DialIn, and play each game it offers on a Play call of its own, with the same messages as the
// Play stream above. A dropped connection is opened again after 1 s, doubling to 30 s; a refusal is final.
const FINAL = new Set([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.INVALID_ARGUMENT,
  grpc.status.FAILED_PRECONDITION, grpc.status.ALREADY_EXISTS]);

function dialIn({ server, token, name, gamesAtOnce, creds }) {
  const client = new BotGateway(server, creds, { 'grpc.keepalive_time_ms': 30000 });
  const metadata = (ticket) => {
    const m = new grpc.Metadata();
    m.set('authorization', `Bearer ${token}`);
    if (ticket) m.set('abluxx-ticket', ticket);
    return m;
  };
  const playGame = (ticket) => {
    const game = client.Play(metadata(ticket));
    game.on('data', (msg) => {
      if (msg.message === 'decision') game.write(reply(msg.decision));
      else if (msg.message === 'game_over') game.end();
    });
    game.on('error', () => {}); // the game ended early; the referee's fault policy plays it
  };
  let wait = 1000;
  let stopped = false;
  const connect = () => {
    const call = client.Connect(metadata());
    call.on('data', (msg) => {
      if (msg.message === 'hello') call.write({ name, hello: HELLO, games_at_once: gamesAtOnce });
      else if (msg.message === 'entered') {
        wait = 1000;
        console.log(`dialled in as ${msg.entered.entrant}`);
      } else if (msg.message === 'open_game') playGame(msg.open_game.ticket);
    });
    call.on('error', () => {}); // told by 'status'
    call.on('status', ({ code, details }) => {
      if (stopped) return;
      if (FINAL.has(code)) {
        console.error(`bot.js: the referee refused the bot: ${details}`);
        process.exit(1);
      }
      console.error(`bot.js: the connection to ${server} ended (${details || code}); again in ${wait / 1000} s`);
      setTimeout(connect, wait);
      wait = Math.min(30000, wait * 2);
    });
  };
  connect();
  return () => {
    stopped = true;
    client.close();
    process.exit(0);
  };
}

function dialInMain(values) {
  if (!values.token) throw new Error('--connect needs the author\'s token: --token T');
  const gamesAtOnce = Number(values['games-at-once']);
  if (!Number.isInteger(gamesAtOnce) || gamesAtOnce < 1 || gamesAtOnce > 64) {
    throw new Error(`--games-at-once must be an integer from 1 to 64, got ${values['games-at-once']}`);
  }
  const fs = require('node:fs');
  const creds = values.tls || values['tls-ca']
    ? grpc.credentials.createSsl(values['tls-ca'] ? fs.readFileSync(values['tls-ca']) : null)
    : grpc.credentials.createInsecure();
  return { server: values.connect, token: values.token, name: values.as || HELLO.name, gamesAtOnce, creds };
}

function parsePort(text) {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port must be an integer from 0 to 65535, got ${JSON.stringify(text)}`);
  }
  return port;
}

function main() {
  let host;
  let port;
  try {
    const { values } = parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        connect: { type: 'string' },
        token: { type: 'string' },
        as: { type: 'string' },
        'games-at-once': { type: 'string', default: '1' },
        tls: { type: 'boolean', default: false },
        'tls-ca': { type: 'string' },
      },
    });
    if (values.connect !== undefined) {
      const stop = dialIn(dialInMain(values));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return;
    }
    host = values.host;
    // a sandbox says where to serve (docs/sandbox.md): ABLUXX_LISTEN=unix:PATH, or a unix: --host
    if (process.env.ABLUXX_LISTEN) host = process.env.ABLUXX_LISTEN;
    if (values.port === undefined && !host.startsWith('unix:')) {
      throw new Error('--port is required (0 picks a free port), or --connect SERVER');
    }
    port = host.startsWith('unix:') ? 0 : parsePort(values.port);
  } catch (err) {
    console.error(`bot.js: ${err.message}\nusage: node bot.js --port P [--host 127.0.0.1|unix:PATH] | --connect SERVER --token T`);
    process.exit(2);
  }

  const unix = host.startsWith('unix:');
  const address = !unix && host.includes(':') ? `[${host}]` : host; // an IPv6 literal needs brackets
  const target = unix ? host : `${address}:${port}`;
  const server = new grpc.Server();
  server.addService(Bot.service, service);
  server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (err, bound) => {
    if (err) {
      console.error(`bot.js: cannot listen on ${target}: ${err.message}`);
      process.exit(1);
    }
    console.log(`listening on ${unix ? target : `${address}:${bound}`}`);
  });

  const stop = () => {
    // Let open calls finish, but not for long: a referee may hold a stream open.
    setTimeout(() => {
      server.forceShutdown();
      process.exit(0);
    }, 1000).unref();
    server.tryShutdown(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main();
