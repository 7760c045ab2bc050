// Voice notes: record with MediaRecorder (at most 7 s, sent by itself at 7 s), upload through
// the gateway (POST /v1/voice -> moderation's UploadNote), play a note by id (GET
// /v1/voice/<id>). The table announces an accepted note by itself (the voice_note event); the
// client never sends voice_sent. A server without the route answers 404 (no reason word) or
// 501: VoiceUnavailable.

export const VOICE_MAX_MS = 7000;
export const PLAY_DELAY_MS = 1000;
export const REPORT_GRACE_MS = 5000;

export class VoiceUnavailable extends Error {
  constructor() {
    super('Voice notes are not available on this server');
  }
}

/** An upload moderation refused: `reason` is the stable word before the colon (moderation.proto). */
export class VoiceRefused extends Error {
  constructor(
    readonly reason: string,
    readonly code: number,
    readonly detail: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Recording {
  blob: Blob;
  durationMs: number;
}

export interface UploadedNote {
  noteId: string;
  round: string;
  durationMs: string;
  format: string;
  replayed: boolean;
}

export function voiceSupported(): boolean {
  return typeof window !== 'undefined' && 'MediaRecorder' in window && !!navigator.mediaDevices?.getUserMedia;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** "until 2026-12-02T10:00:00Z" in a refusal -> that time, shown in the player's own clock. */
export function formatUntil(iso: string, now: Date = new Date()): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const hm = `${pad(t.getHours())}:${pad(t.getMinutes())}`;
  const sameDay = t.getFullYear() === now.getFullYear() && t.getMonth() === now.getMonth() && t.getDate() === now.getDate();
  if (sameDay) return hm;
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${hm}`;
}

/** The words shown to the player for a refused upload (short; the reason word decides). */
export function refusalText(reason: string, detail: string, now: Date = new Date()): string {
  switch (reason) {
    case 'muted': {
      const until = mutedUntilMs(detail);
      return until ? `You can't send voice notes until ${formatUntil(new Date(until).toISOString(), now)}` : "You can't send voice notes until an admin lifts it";
    }
    case 'too_long':
      return 'Too long: a voice note lasts at most 7 seconds';
    case 'too_big':
      return 'Too big: record a shorter note';
    case 'no_lock':
      return 'Too late: the recording slot expired';
    case 'unsupported_format':
      return "This recording's format is not supported";
    case 'allowance_used':
      return "You already used this round's voice note";
    case 'alone':
      return 'Nobody else is here to hear it';
    case 'not_seated':
      return 'Only seated players can send voice notes';
    case 'no_round':
      return 'The round ended before the note arrived';
    default:
      return detail || 'The voice note could not be sent';
  }
}

/** The end of a timed mute named in a `muted` refusal's detail (server ms), or 0 (none, or
 * until an admin lifts it: the next try asks again). */
export function mutedUntilMs(detail: string): number {
  const m = /until (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)/.exec(detail);
  const t = m ? Date.parse(m[1]) : NaN;
  return Number.isNaN(t) ? 0 : t;
}

/** Splits "no_lock: you do not hold ..." into its reason word and the rest. */
export function refusalReason(message: string): { reason: string; detail: string } {
  const m = /^([a-z_]+): ?(.*)$/s.exec(message);
  return m ? { reason: m[1], detail: m[2] } : { reason: '', detail: message };
}

/**
 * POST /v1/voice: the recording as the body, the table in x-courtpiece-table-id (the server
 * measures the duration). Answers the UploadNoteResponse; a refusal is a VoiceRefused.
 */
export async function uploadNote(
  rec: Recording,
  tableId: string,
  token: string,
  fetchFn: typeof fetch = (...a) => fetch(...a),
  now: () => Date = () => new Date(),
): Promise<UploadedNote> {
  let res: Response;
  try {
    res = await fetchFn('/v1/voice', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': rec.blob.type || 'audio/webm',
        'x-courtpiece-table-id': tableId,
      },
      body: rec.blob,
    });
  } catch {
    throw new Error('The voice note could not be sent');
  }
  let j: Record<string, unknown> = {};
  try {
    j = await res.json();
  } catch {
    /* no body */
  }
  if (res.ok && typeof j.noteId === 'string' && j.noteId) return j as unknown as UploadedNote;
  const message = String(j.message ?? '');
  const { reason, detail } = refusalReason(message);
  // 404 is also moderation's no_table / no_round; without a reason word it is the route missing.
  if ((res.status === 404 && !reason) || res.status === 501) throw new VoiceUnavailable();
  if (res.status === 413) throw new VoiceRefused('too_big', Number(j.code ?? 3), message, refusalText('too_big', message));
  if (res.status === 415) {
    throw new VoiceRefused('unsupported_format', Number(j.code ?? 3), message, refusalText('unsupported_format', message));
  }
  if (res.status === 503) throw new VoiceRefused('unavailable', 14, message, 'Voice notes are unavailable right now; try again');
  throw new VoiceRefused(reason, Number(j.code ?? 0), detail, refusalText(reason, detail, now()));
}

/** GET /v1/voice/<noteId> with the token, as an object URL for an <audio>. */
export async function fetchNote(noteId: string, token: string, fetchFn: typeof fetch = (...a) => fetch(...a)): Promise<string> {
  const res = await fetchFn(`/v1/voice/${encodeURIComponent(noteId)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (!res.ok) throw new Error('The voice note could not be played');
  return URL.createObjectURL(await res.blob());
}

export class Recorder {
  private rec: MediaRecorder | null = null;
  private stream: MediaStream | null = null;
  private chunks: Blob[] = [];
  private startedAt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private done: ((r: Recording | null) => void) | null = null;
  private discard = false;

  /** Starts recording; resolves with the note when stopped (auto at 7 s), null if discarded. */
  async start(): Promise<{ done: Promise<Recording | null> }> {
    this.stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    this.chunks = [];
    this.discard = false;
    const rec = new MediaRecorder(this.stream);
    this.rec = rec;
    const result = new Promise<Recording | null>((resolve) => (this.done = resolve));
    rec.ondataavailable = (e) => {
      if (e.data && e.data.size > 0) this.chunks.push(e.data);
    };
    rec.onstop = () => {
      const durationMs = Math.max(1, Math.min(VOICE_MAX_MS, Date.now() - this.startedAt));
      this.stream?.getTracks().forEach((t) => t.stop());
      this.stream = null;
      if (this.timer) clearTimeout(this.timer);
      const blob = new Blob(this.chunks, { type: rec.mimeType || 'audio/webm' });
      this.done?.(this.discard ? null : { blob, durationMs });
      this.done = null;
    };
    rec.start(250);
    this.startedAt = Date.now();
    this.timer = setTimeout(() => this.stop(), VOICE_MAX_MS);
    return { done: result };
  }

  stop(): void {
    if (this.rec && this.rec.state !== 'inactive') this.rec.stop();
  }

  cancel(): void {
    this.discard = true;
    this.stop();
    this.stream?.getTracks().forEach((t) => t.stop());
  }

  elapsedMs(): number {
    return this.startedAt ? Date.now() - this.startedAt : 0;
  }
}
