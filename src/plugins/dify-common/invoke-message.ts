import { z } from 'zod';
import { firstIssue } from '../../errors.js';

/** The kinds of message a Dify tool streams back: ToolInvokeMessage's types in the plugin SDK (dify_plugin/entities/tool.py). */
export const InvokeMessageType = {
  Text: 'text',
  Link: 'link',
  Image: 'image',
  ImageLink: 'image_link',
  BinaryLink: 'binary_link',
  Json: 'json',
  Blob: 'blob',
  BlobChunk: 'blob_chunk',
  Variable: 'variable',
  Log: 'log',
  RetrieverResources: 'retriever_resources',
  File: 'file',
} as const;
export type InvokeMessageType = (typeof InvokeMessageType)[keyof typeof InvokeMessageType];

const meta = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((value) => value ?? null);
const textBody = z.looseObject({ text: z.string() });

const textLike = z.object({
  type: z.enum(['text', 'link', 'image', 'image_link', 'binary_link']),
  message: textBody,
  meta,
});
const json = z.object({
  type: z.literal('json'),
  message: z.looseObject({ json_object: z.unknown(), suppress_output: z.boolean().nullish() }),
  meta,
});
const blob = z.object({ type: z.literal('blob'), message: z.looseObject({ blob: z.string() }), meta });
const blobChunk = z.object({
  type: z.literal('blob_chunk'),
  message: z.looseObject({
    id: z.string().min(1),
    // Numbers may arrive as floats (1.0); JSON.parse reads those as integers already.
    sequence: z.number().int().nonnegative(),
    total_length: z.number().int().nonnegative().nullish(),
    blob: z.string(),
    end: z.boolean(),
  }),
  meta,
});
const variable = z.object({
  type: z.literal('variable'),
  message: z.looseObject({ variable_name: z.string(), variable_value: z.unknown(), stream: z.boolean().nullish() }),
  meta,
});
const log = z.object({
  type: z.literal('log'),
  message: z.looseObject({
    id: z.string(),
    label: z.string(),
    parent_id: z.string().nullish(),
    error: z.string().nullish(),
    status: z.string(),
    data: z.unknown(),
    metadata: z.unknown(),
  }),
  meta,
});
const retriever = z.object({
  type: z.literal('retriever_resources'),
  message: z.looseObject({ retriever_resources: z.array(z.record(z.string(), z.unknown())), context: z.string().nullish() }),
  meta,
});
const file = z.object({ type: z.literal('file'), message: z.looseObject({ file_marker: z.string().nullish() }), meta });

const known = z.discriminatedUnion('type', [textLike, json, blob, blobChunk, variable, log, retriever, file]);

export type TextLikeMessage = z.output<typeof textLike>;
export type JsonMessage = z.output<typeof json>;
export type BlobMessage = z.output<typeof blob>;
export type BlobChunkMessage = z.output<typeof blobChunk>;
export type LogMessage = z.output<typeof log>;
export type RetrieverResourcesMessage = z.output<typeof retriever>;
export type FileMessage = z.output<typeof file>;
export type KnownInvokeMessage = z.output<typeof known>;

/** Any message, as far as a type this version does not know can be read: its meta kept only when it is an object. */
const other = z.object({
  type: z.string(),
  message: z.unknown().optional(),
  meta: z
    .record(z.string(), z.unknown())
    .nullish()
    .catch(null)
    .transform((value) => value ?? null),
});

/** A type this version does not know: kept, so a newer SDK does not break the call. */
export type OtherInvokeMessage = z.output<typeof other>;
export type InvokeMessage = KnownInvokeMessage | OtherInvokeMessage;

export type ParsedInvokeMessage = { ok: true; message: InvokeMessage } | { ok: false; problem: string };

const KNOWN = new Set<string>(Object.values(InvokeMessageType));

/** Read one invoke message. A known type with the wrong shape is a problem; an unknown type is passed on. */
export function parseInvokeMessage(value: unknown): ParsedInvokeMessage {
  // Known types are nearly every message: one parse for them.
  const r = known.safeParse(value);
  if (r.success) return { ok: true, message: r.data };
  const head = other.safeParse(value);
  if (!head.success) return { ok: false, problem: `an invoke message is malformed ${firstIssue(head.error)}` };
  if (!KNOWN.has(head.data.type)) return { ok: true, message: head.data };
  return { ok: false, problem: `a ${head.data.type} message is malformed ${firstIssue(r.error)}` };
}

export function isKnown(message: InvokeMessage): message is KnownInvokeMessage {
  return KNOWN.has(message.type);
}
