// An MCP server over stdio, on the SDK's own server classes: its one tool, `whoami`, reports
// the process's environment, user, groups and working directory, and whether it can read
// its parent's (the worker's) environment in /proc.
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

function parentEnviron() {
  try {
    readFileSync(`/proc/${process.ppid}/environ`);
    return 'readable';
  } catch (err) {
    return err.code;
  }
}

const server = new McpServer({ name: 'whoami', version: '1.0.0' });
server.registerTool('whoami', { description: 'who and where this server is' }, async () => ({
  content: [
    {
      type: 'text',
      text: JSON.stringify({
        env: process.env,
        uid: process.getuid(),
        gid: process.getgid(),
        groups: process.getgroups(),
        cwd: process.cwd(),
        ppid: process.ppid,
        parentEnviron: parentEnviron(),
      }),
    },
  ],
}));
await server.connect(new StdioServerTransport());
