import { stringify as stableStringify } from 'safe-stable-stringify';
import type { Logger } from 'pino';
import { PayloadTooLargeError } from '../../errors.js';
import { BLOB_FILE_MAX_BYTES, BlobChunkMerger, type BlobLimits } from './blob-merger.js';
import type { BlobSink } from '../blob-sink.js';
import { isKnown, type InvokeMessage, type LogMessage } from './invoke-message.js';
import { isLosslessNumber, parsePluginJson, stringifyPluginJson } from './plugin-json.js';
import { pythonJsonDumps } from './python-json.js';
import { redact } from '../../redact.js';

export const LINK_TEXT = (url: string): string => `result link: ${url}. please tell user to check it.`;
export const IMAGE_TEXT = 'image has been created and sent to user already, you do not need to create it, just tell the user to check it now.';

export interface ObservationOptions {
  readonly log: Logger;
  readonly blobSink: BlobSink;
  readonly signal: AbortSignal;
  readonly limits?: BlobLimits;
  /** Values to mask in what a tool's log messages carry (they may echo credentials). */
  readonly secrets?: readonly string[];
  /** The JSON parts held until the end may not exceed this in all (default 512 KiB, the worker's default observation bound). */
  readonly jsonMaxBytes?: number;
}

export const JSON_PARTS_MAX_BYTES = 512 * 1024;

/** One form for equal JSON values: keys sorted, a number a double cannot hold by its digits. */
function canonical(value: unknown): string {
  return stableStringify(value, (_key, node: unknown) => (isLosslessNumber(node) ? `\u0000${node.toString()}` : node)) ?? '';
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB (${bytes} bytes)`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB (${bytes} bytes)`;
}

/**
 * Turns a tool's invoke messages into the observation an agent reads, the way Dify's agent
 * does (text appended, links and images as Dify's sentences, JSON parts after the text,
 * skipping one equal to a text part, `variable` ignored), except where Dify does something
 * no one wants: a file is described (type, size, where it went) instead of its bytes being
 * printed, and log messages go to our log instead of the observation.
 *
 * `accept` returns the text to send now; `finish` returns what can only be known at the end
 * (the JSON parts) and reports a file whose last chunk never came.
 */
export class ObservationBuilder {
  private readonly texts = new Set<string>();
  /** Each JSON-looking text part once, in a canonical form (keys sorted): what a JSON part is matched against. */
  private readonly textsAsJson = new Set<string>();
  private readonly jsonParts: { text: string; value: unknown }[] = [];
  private jsonBytes = 0;
  private readonly jsonMaxBytes: number;
  private readonly merger: BlobChunkMerger;
  private readonly fileMaxBytes: number;

  constructor(private readonly opts: ObservationOptions) {
    this.merger = new BlobChunkMerger(opts.limits);
    this.fileMaxBytes = opts.limits?.fileMaxBytes ?? BLOB_FILE_MAX_BYTES;
    this.jsonMaxBytes = opts.jsonMaxBytes ?? JSON_PARTS_MAX_BYTES;
  }

  async accept(msg: InvokeMessage): Promise<string[]> {
    if (!isKnown(msg)) {
      // A type this version does not know: its string form, as Dify does for "others".
      return this.text(typeof msg.message === 'string' ? msg.message : stringifyPluginJson(msg.message ?? null));
    }
    switch (msg.type) {
      case 'text':
        return this.text(msg.message.text);
      case 'link':
      case 'binary_link':
        return this.text(LINK_TEXT(msg.message.text));
      case 'image':
      case 'image_link':
        this.opts.log.debug({ url: msg.message.text }, 'tool sent an image');
        return this.text(IMAGE_TEXT);
      case 'json':
        if (!msg.message.suppress_output) {
          const text = pythonJsonDumps(msg.message.json_object);
          // Held until the end of the stream: bounded, or a plugin could fill the worker's memory.
          this.jsonBytes += Buffer.byteLength(text);
          if (this.jsonBytes > this.jsonMaxBytes) {
            throw new PayloadTooLargeError(`tool invoke error: the tool's JSON messages exceed ${sizeText(this.jsonMaxBytes)} in all; the answer was refused`);
          }
          this.jsonParts.push({ text, value: msg.message.json_object });
        }
        return [];
      case 'blob': {
        const data = Buffer.from(msg.message.blob, 'base64');
        if (data.length > this.fileMaxBytes) {
          throw new PayloadTooLargeError(
            `tool invoke error: the tool sent a file of ${sizeText(data.length)}, over the ${sizeText(this.fileMaxBytes)} limit; it was refused`,
          );
        }
        return this.text(await this.describe(data, msg.meta));
      }
      case 'blob_chunk': {
        const merged = this.merger.push(msg);
        if (!merged) return [];
        if (merged.declaredLength !== undefined && merged.declaredLength !== merged.data.length) {
          this.opts.log.warn(
            { blobId: merged.id, declared: merged.declaredLength, received: merged.data.length },
            'merged file size differs from the announced total_length',
          );
        }
        return this.text(await this.describe(merged.data, merged.meta));
      }
      case 'variable':
        this.opts.log.debug({ variable: msg.message.variable_name }, 'tool set a variable (not part of the observation)');
        return [];
      case 'log':
        this.logMessage(msg);
        return [];
      case 'retriever_resources': {
        this.opts.log.debug({ resources: msg.message.retriever_resources.length }, 'tool sent retriever resources');
        const context = str(msg.message.context);
        return context ? this.text(context) : [];
      }
      case 'file':
        return this.text(this.describeFileMarker(msg.meta));
    }
  }

  finish(): string[] {
    this.merger.finish();
    const seen = new Set(this.texts);
    const out: string[] = [];
    for (const part of this.jsonParts) {
      if (seen.has(part.text) || this.isTextOf(part.value)) continue;
      seen.add(part.text);
      out.push(part.text);
    }
    return out;
  }

  private text(content: string): string[] {
    if (!this.texts.has(content)) {
      this.texts.add(content);
      const s = content.trim();
      if (s.startsWith('{') || s.startsWith('[')) {
        try {
          this.textsAsJson.add(canonical(parsePluginJson(s)));
        } catch {
          // not JSON: no JSON part can be the same
        }
      }
    }
    return content === '' ? [] : [content];
  }

  /**
   * A text part that is the same JSON, written another way (a plugin's own json.dumps). One
   * canonical form per text, parsed once as it arrives: matching is a set lookup per JSON part,
   * not a parse of every text for every part.
   */
  private isTextOf(value: unknown): boolean {
    return this.textsAsJson.has(canonical(value));
  }

  private async describe(data: Buffer, meta: Record<string, unknown> | null): Promise<string> {
    const mimeType = str(meta?.['mime_type']) ?? 'application/octet-stream';
    const filename = str(meta?.['filename']) ?? str(meta?.['file_name']);
    const where = await this.opts.blobSink.store(data, { mimeType, filename }, this.opts.signal);
    this.opts.log.info({ mimeType, bytes: data.length, filename, where }, 'tool created a file');
    return `[file${filename ? ` ${filename}` : ''}: ${mimeType}, ${sizeText(data.length)}, ${where}]`;
  }

  private describeFileMarker(meta: Record<string, unknown> | null): string {
    const f = meta?.['file'];
    const file = f && typeof f === 'object' ? (f as Record<string, unknown>) : {};
    const name = str(file['filename']) ?? str(file['name']);
    const mime = str(file['mime_type']) ?? 'unknown type';
    const url = str(file['url']) ?? str(file['remote_url']);
    return `[file${name ? ` ${name}` : ''}: ${mime}${url ? `, at ${url}` : ''}]`;
  }

  private logMessage(msg: LogMessage): void {
    const m = msg.message;
    const fields = { toolLog: { id: m.id, label: m.label, parentId: m.parent_id ?? undefined, status: m.status }, data: this.masked(m.data) };
    if (m.status === 'error') this.opts.log.warn({ ...fields, error: m.error ? redact(m.error, this.opts.secrets ?? []) : undefined }, 'tool log message');
    else this.opts.log.info(fields, 'tool log message');
  }

  private masked(data: unknown): unknown {
    const secrets = this.opts.secrets ?? [];
    if (secrets.length === 0 || data === undefined) return data;
    const text = stringifyPluginJson(data);
    const clean = redact(text, secrets);
    if (clean === text) return data;
    try {
      return parsePluginJson(clean);
    } catch {
      return '[redacted]';
    }
  }
}
