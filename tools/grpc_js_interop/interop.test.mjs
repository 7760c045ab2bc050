// The gateway's gRPC port with a second client stack: @grpc/grpc-js on Node's own HTTP/2
// (nghttp2), not gRPC's C-core that every other test uses. A player signs in, creates a table
// and plays on it as a phone on another stack would: unary calls, deadlines, metadata, a Play
// stream both ways, errors with their codes, and the health check.
// Needs GATEWAY_GRPC (host:port of a running gateway; tests/web_e2e.sh starts one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';

const here = path.dirname(fileURLToPath(import.meta.url));
const protos = path.resolve(here, '../../protos');
const target = process.env.GATEWAY_GRPC;

const definition = protoLoader.loadSync('courtpiece/client/v1/client.proto', {
  includeDirs: [protos], keepCase: false, longs: String, enums: String, defaults: true,
  oneofs: true,
});
const CourtPiece = grpc.loadPackageDefinition(definition).courtpiece.client.v1.CourtPiece;

function deadline(ms = 5000) { return new Date(Date.now() + ms); }
function unary(client, method, request, metadata = new grpc.Metadata()) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline: deadline() }, (err, reply) =>
      err ? reject(err) : resolve(reply));
  });
}
function bearer(token) {
  const m = new grpc.Metadata();
  m.set('authorization', `Bearer ${token}`);
  return m;
}
function secret() {
  return Array.from({ length: 40 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(Math.random() * 36)]).join('');
}

test('grpc-js: sign in, create a table, open it and sit down over Play', { skip: !target }, async () => {
  const client = new CourtPiece(target, grpc.credentials.createInsecure());
  try {
    const session = await unary(client, 'guestLogin', { deviceSecret: secret(), displayName: 'Interop' });
    assert.match(session.playerId, /.+/);
    assert.match(session.accessToken, /.+/);
    const auth = bearer(session.accessToken);

    const profile = await unary(client, 'getProfile', {}, auth);
    assert.equal(profile.playerId, session.playerId);
    assert.equal(profile.displayName, 'Interop');

    // Errors keep their codes: no token, a bad code.
    await assert.rejects(unary(client, 'getProfile', {}),
      (e) => e.code === grpc.status.UNAUTHENTICATED);
    await assert.rejects(unary(client, 'resolveCode', { code: 'nope' }, auth),
      (e) => e.code === grpc.status.INVALID_ARGUMENT);

    const table = await unary(client, 'createTable', {
      requestId: `interop-${Date.now()}`,
      options: { gameOptions: '{"game":"classic","target":1}', betCoins: '25', turnTimeMs: '30000' },
    }, auth);
    assert.match(table.tableId, /.+/);
    assert.match(table.code, /^[0-9]{6}$/);
    const resolved = await unary(client, 'resolveCode', { code: table.code }, auth);
    assert.equal(resolved.tableId, table.tableId);

    const stream = client.play(auth);
    const seen = [];
    const waitFor = (pred, ms = 10000) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; seen ${JSON.stringify(seen)}`)), ms);
      const check = () => {
        const hit = seen.find(pred);
        if (hit) { clearTimeout(timer); stream.off('data', onData); resolve(hit); }
      };
      const onData = () => check();
      stream.on('data', onData);
      check();
    });
    stream.on('data', (m) => seen.push(m));
    const ended = new Promise((resolve) => stream.on('status', resolve));
    stream.on('error', () => {});
    stream.write({ open: { tableId: table.tableId, lastSeq: '0' } });
    const opened = await waitFor((m) => m.msg === 'opened');
    assert.equal(opened.opened.table.tableId, table.tableId);
    assert.equal(opened.opened.seat, 0);  // the host's seat
    // A command and its result, matched by id.
    stream.write({ command: { commandId: '7', type: 'vote', yes: true } });
    const result = await waitFor((m) => m.msg === 'result' && m.result.commandId === '7');
    assert.equal(result.result.code, 9);  // FAILED_PRECONDITION: no vote is running
    stream.end();  // the client's half-close ends the stream OK
    const status = await ended;
    assert.equal(status.code, grpc.status.OK);
  } finally {
    client.close();
  }
});

test('grpc-js: the health check answers on the same port', { skip: !target }, async () => {
  const health = protoLoader.fromJSON({
    nested: { grpc: { nested: { health: { nested: { v1: { nested: {
      HealthCheckRequest: { fields: { service: { type: 'string', id: 1 } } },
      HealthCheckResponse: { fields: { status: { type: 'int32', id: 1 } } },
      Health: { methods: { Check: { requestType: 'HealthCheckRequest', responseType: 'HealthCheckResponse' } } },
    } } } } } } },
  });
  const Health = grpc.loadPackageDefinition(health).grpc.health.v1.Health;
  const client = new Health(target, grpc.credentials.createInsecure());
  try {
    const reply = await new Promise((resolve, reject) =>
      client.check({ service: '' }, { deadline: deadline() }, (e, r) => (e ? reject(e) : resolve(r))));
    assert.equal(reply.status, 1);  // SERVING
  } finally {
    client.close();
  }
});
