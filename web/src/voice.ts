// Voice notes: record with MediaRecorder (at most 7 s, sent by itself at 7 s), upload to the
// moderation service's route POST /v1/voice, play a note by id. The route comes with the
// moderation service; a server without it answers 404/501/503: VoiceUnavailable.

export const VOICE_MAX_MS = 7000;
export const PLAY_DELAY_MS = 1000;
export const REPORT_GRACE_MS = 5000;

export class VoiceUnavailable extends Error {
  constructor() {
    super('Voice notes are not available on this server');
  }
}

export interface Recording {
  blob: Blob;
  durationMs: number;
}

export function voiceSupported(): boolean {
  return typeof window !== 'undefined' && 'MediaRecorder' in window && !!navigator.mediaDevices?.getUserMedia;
}

/** POST /v1/voice: the audio as the body; answers {"noteId": "..."}. */
export async function uploadNote(
  rec: Recording,
  tableId: string,
  token: string,
  fetchFn: typeof fetch = (...a) => fetch(...a),
): Promise<string> {
  let res: Response;
  try {
    res = await fetchFn('/v1/voice', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': rec.blob.type || 'audio/webm',
        'x-courtpiece-table-id': tableId,
        'x-courtpiece-duration-ms': String(rec.durationMs),
      },
      body: rec.blob,
    });
  } catch {
    throw new Error('The voice note could not be sent');
  }
  if (res.status === 404 || res.status === 501 || res.status === 503) throw new VoiceUnavailable();
  let j: Record<string, unknown> = {};
  try {
    j = await res.json();
  } catch {
    /* no body */
  }
  if (!res.ok || typeof j.noteId !== 'string' || !j.noteId) {
    throw new Error(String(j.message ?? 'The voice note could not be sent'));
  }
  return j.noteId;
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
