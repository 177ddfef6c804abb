import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { ToolFailedError } from '../../errors.js';
import type { BlobSink } from '../blob-sink.js';

/** What a block that is not text becomes: a line an agent can read, never base64. */
async function describe(block: ContentBlock, blobs: BlobSink, signal: AbortSignal): Promise<string | undefined> {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio': {
      const data = Buffer.from(block.data, 'base64');
      const where = await blobs.store(data, { mimeType: block.mimeType, filename: undefined }, signal);
      return `[${block.type} ${block.mimeType}, ${data.length} bytes, ${where}]`;
    }
    case 'resource_link':
      return `[resource link: ${block.name} <${block.uri}>${block.mimeType ? ` (${block.mimeType})` : ''}${block.description ? `: ${block.description}` : ''}]`;
    case 'resource': {
      const r = block.resource;
      if ('text' in r) return `[resource <${r.uri}>${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}`;
      const data = Buffer.from(r.blob, 'base64');
      const where = await blobs.store(data, { mimeType: r.mimeType ?? 'application/octet-stream', filename: undefined }, signal);
      return `[resource <${r.uri}>, ${r.mimeType ?? 'binary'}, ${data.length} bytes, ${where}]`;
    }
    default:
      return undefined;
  }
}

/**
 * A `tools/call` result as observation text: the blocks in order, one per line (text as it
 * is, files written to the blob store and described); `structuredContent` as its JSON text
 * when the result has no text. `isError` becomes a tool failure carrying that text.
 */
export async function resultText(result: CallToolResult, blobs: BlobSink, signal: AbortSignal): Promise<string> {
  const parts: string[] = [];
  for (const block of result.content ?? []) {
    const text = await describe(block, blobs, signal);
    if (text !== undefined) parts.push(text);
  }
  const hasText = (result.content ?? []).some((block) => block.type === 'text');
  if (!hasText && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  if (result.isError) throw new ToolFailedError(text || 'the MCP tool reported an error without text');
  return text;
}
