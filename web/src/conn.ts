// The Play stream over the WebSocket /v1/play (docs/client-api.md §1.3, §3): open with the
// highest seq seen, reconnect by itself with a bounded backoff, stop for good on the codes
// that say so (NOT_FOUND, ABORTED, PERMISSION_DENIED, INVALID_ARGUMENT).

export interface PlayHandlers {
  onMessage(msg: Record<string, unknown>): void;
  onState(state: 'connecting' | 'open' | 'reconnecting'): void;
  onEnded(message: string, code: number): void;
}

export const BACKOFF_MIN_MS = 500;
export const BACKOFF_MAX_MS = 10_000;
const OPEN_TIMEOUT_MS = 10_000;

/** The close codes after which a reconnect would not help (4000 + gRPC code). */
export function isFinalClose(code: number): boolean {
  return code === 4005 || code === 4010 || code === 4007 || code === 4003 || code === 1000;
}

export function closeMessage(code: number, reason: string): string {
  switch (code) {
    case 4005:
      return 'This table is closed';
    case 4010:
      return 'You opened this table in another tab or device';
    case 4007:
      return reason || 'Not allowed at this table';
    case 1000:
      return reason || 'The table ended the connection';
    default:
      return reason || `Connection closed (${code})`;
  }
}

export function backoffMs(attempt: number, rand: () => number = Math.random): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(attempt, 10));
  return Math.round(base * (0.75 + 0.5 * rand()));
}

export class PlayConnection {
  private ws: WebSocket | null = null;
  private attempt = 0;
  private nextId = 1;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private opened = false;

  constructor(
    private url: string,
    private tableId: string,
    private token: (force: boolean) => Promise<string>,
    private lastSeq: () => number,
    private h: PlayHandlers,
  ) {}

  start(): void {
    this.stopped = false;
    void this.connect(false);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      try {
        ws.close(1000, 'bye');
      } catch {
        /* already closed */
      }
    }
  }

  /** For tests and the "drop" button: close the socket as a network loss would. */
  dropForTest(): void {
    this.ws?.close(4999, 'test drop');
  }

  /** Sends a command; returns its id, or 0 when the stream is not open. */
  send(command: Record<string, unknown>): number {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || !this.opened) return 0;
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ command: { commandId: String(id), ...command } }));
    return id;
  }

  private async connect(forceToken: boolean): Promise<void> {
    if (this.stopped) return;
    this.h.onState(this.attempt === 0 ? 'connecting' : 'reconnecting');
    let token = '';
    try {
      token = await this.token(forceToken);
    } catch {
      this.retry();
      return;
    }
    if (this.stopped) return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    this.opened = false;
    this.nextId = 1;
    const openTimer = setTimeout(() => ws.close(4999, 'open timeout'), OPEN_TIMEOUT_MS);
    ws.onopen = () => {
      ws.send(
        JSON.stringify({
          open: { tableId: this.tableId, lastSeq: String(this.lastSeq()), accessToken: token },
        }),
      );
    };
    ws.onmessage = (m) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(String(m.data));
      } catch {
        return;
      }
      if (msg.opened) {
        clearTimeout(openTimer);
        this.opened = true;
        this.attempt = 0;
        this.h.onState('open');
      }
      this.h.onMessage(msg);
    };
    ws.onclose = (c) => {
      clearTimeout(openTimer);
      if (this.ws !== ws) return; // replaced or stopped
      this.ws = null;
      this.opened = false;
      if (this.stopped) return;
      if (isFinalClose(c.code)) {
        this.stopped = true;
        this.h.onEnded(closeMessage(c.code, c.reason), c.code);
        return;
      }
      this.retry(c.code === 4016);
    };
  }

  private retry(forceToken = false): void {
    if (this.stopped) return;
    this.h.onState('reconnecting');
    const wait = backoffMs(this.attempt++);
    this.timer = setTimeout(() => void this.connect(forceToken), wait);
  }
}
