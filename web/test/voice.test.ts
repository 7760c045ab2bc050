import { describe, expect, it } from 'vitest';
import { VoiceRefused, VoiceUnavailable, formatUntil, mutedUntilMs, refusalReason, refusalText, uploadNote } from '../src/voice';

type Seen = { url: string; headers: Record<string, string>; body: unknown; method: string };
function fakeFetch(status: number, body: unknown) {
  const seen: Seen[] = [];
  const f = (async (url: string, init: any) => {
    seen.push({ url: String(url), headers: init.headers, body: init.body, method: init.method });
    return { ok: status === 200, status, json: async () => body } as Response;
  }) as unknown as typeof fetch;
  return { f, seen };
}
const rec = (type = 'audio/webm;codecs=opus') => ({ blob: new Blob([new Uint8Array([0x1a, 0x45, 0xdf, 0xa3])], { type }), durationMs: 3000 });
const err = (code: number, status: string, message: string) => ({ code, status, message });
const noon = new Date(2026, 11, 1, 12, 0, 0);

async function refusal(status: number, body: unknown): Promise<VoiceRefused> {
  const { f } = fakeFetch(status, body);
  try {
    await uploadNote(rec(), 't-1', 'tok', f, () => noon);
  } catch (e) {
    expect(e).toBeInstanceOf(VoiceRefused);
    return e as VoiceRefused;
  }
  throw new Error('not refused');
}

describe('uploadNote', () => {
  it('posts the raw recording with the table header and no duration header', async () => {
    const reply = { noteId: 'n-1', round: '3', durationMs: '2980', format: 'webm/opus', replayed: false };
    const { f, seen } = fakeFetch(200, reply);
    const r = rec();
    expect(await uploadNote(r, 't-9', 'tok', f)).toEqual(reply);
    expect(seen).toHaveLength(1);
    expect(seen[0].url).toBe('/v1/voice');
    expect(seen[0].method).toBe('POST');
    expect(seen[0].body).toBe(r.blob);
    expect(seen[0].headers).toEqual({
      authorization: 'Bearer tok',
      'content-type': 'audio/webm;codecs=opus',
      'x-courtpiece-table-id': 't-9',
    });
  });

  it('sends audio/webm when the recorder gave no type', async () => {
    const { f, seen } = fakeFetch(200, { noteId: 'n-2' });
    await uploadNote(rec(''), 't-9', 'tok', f);
    expect(seen[0].headers['content-type']).toBe('audio/webm');
  });

  it('muted with a time: says until when, in local time', async () => {
    const until = new Date(2026, 11, 1, 18, 30, 0).toISOString().replace(/\.\d+Z$/, 'Z');
    const e = await refusal(403, err(7, 'PERMISSION_DENIED', `muted: an admin stopped your voice notes until ${until}`));
    expect(e.reason).toBe('muted');
    expect(e.message).toBe("You can't send voice notes until 18:30");
  });

  it('muted on another day shows the date too', async () => {
    const until = new Date(2026, 11, 3, 9, 5, 0).toISOString().replace(/\.\d+Z$/, 'Z');
    const e = await refusal(403, err(7, 'PERMISSION_DENIED', `muted: an admin stopped your voice notes until ${until}`));
    expect(e.message).toBe("You can't send voice notes until 2026-12-03 09:05");
  });

  it('the end of a timed mute, for keeping the microphone off until then', () => {
    expect(mutedUntilMs('an admin stopped your voice notes until 2026-12-02T01:02:03Z')).toBe(Date.UTC(2026, 11, 2, 1, 2, 3));
    expect(mutedUntilMs('until 2026-12-02T01:02:03.250Z')).toBe(Date.UTC(2026, 11, 2, 1, 2, 3, 250));
    expect(mutedUntilMs('an admin stopped your voice notes until they lift it')).toBe(0);
    expect(mutedUntilMs('')).toBe(0);
  });

  it('muted until lifted', async () => {
    const e = await refusal(403, err(7, 'PERMISSION_DENIED', 'muted: an admin stopped your voice notes until they lift it'));
    expect(e.message).toBe("You can't send voice notes until an admin lifts it");
  });

  it('too_long, no_lock, unsupported_format, allowance_used', async () => {
    expect((await refusal(400, err(11, 'OUT_OF_RANGE', 'too_long: the recording lasts 8200 ms'))).message).toBe(
      'Too long: a voice note lasts at most 7 seconds',
    );
    const lock = await refusal(400, err(9, 'FAILED_PRECONDITION', 'no_lock: you do not hold the recording lock at table t-1'));
    expect(lock.reason).toBe('no_lock');
    expect(lock.message).toBe('Too late: the recording slot expired');
    const fmt = await refusal(400, err(3, 'INVALID_ARGUMENT', 'unsupported_format: not WebM/Opus, Ogg/Opus or MP4/AAC audio'));
    expect(fmt.reason).toBe('unsupported_format');
    expect(fmt.message).toBe("This recording's format is not supported");
    expect((await refusal(409, err(6, 'ALREADY_EXISTS', 'allowance_used: already sent'))).message).toBe(
      "You already used this round's voice note",
    );
  });

  it("the gateway's own 413 and 415", async () => {
    const big = await refusal(413, err(3, 'INVALID_ARGUMENT', 'request body over 540672 bytes'));
    expect(big.reason).toBe('too_big');
    expect(big.message).toBe('Too big: record a shorter note');
    const type = await refusal(415, err(3, 'INVALID_ARGUMENT', 'unsupported content type video/webm'));
    expect(type.reason).toBe('unsupported_format');
  });

  it('no_table is a refusal, a 404 without a reason word is a server without voice', async () => {
    expect((await refusal(404, err(5, 'NOT_FOUND', 'no_round: round 3 is over'))).message).toBe('The round ended before the note arrived');
    const { f } = fakeFetch(404, err(5, 'NOT_FOUND', 'unknown method voice'));
    await expect(uploadNote(rec(), 't-1', 'tok', f)).rejects.toBeInstanceOf(VoiceUnavailable);
    const g = fakeFetch(501, err(12, 'UNIMPLEMENTED', 'no'));
    await expect(uploadNote(rec(), 't-1', 'tok', g.f)).rejects.toBeInstanceOf(VoiceUnavailable);
  });

  it('an unknown reason shows the server message; a lost connection a plain one', async () => {
    expect((await refusal(400, err(3, 'INVALID_ARGUMENT', 'bad_request: audio is empty'))).message).toBe('audio is empty');
    const down = (async () => {
      throw new TypeError('network');
    }) as unknown as typeof fetch;
    await expect(uploadNote(rec(), 't-1', 'tok', down)).rejects.toThrow('The voice note could not be sent');
  });
});

describe('refusal words', () => {
  it('splits the reason word from the message', () => {
    expect(refusalReason('no_lock: you do not hold it')).toEqual({ reason: 'no_lock', detail: 'you do not hold it' });
    expect(refusalReason('plain message')).toEqual({ reason: '', detail: 'plain message' });
    expect(refusalText('whatever', '')).toBe('The voice note could not be sent');
  });
  it('formats a bad time as it came', () => {
    expect(formatUntil('soon', noon)).toBe('soon');
  });
});
