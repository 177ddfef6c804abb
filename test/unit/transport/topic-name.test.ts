import { describe, expect, it } from 'vitest';
import { parseTopic } from '../../../src/transport/topic-name.js';

describe('topic names', () => {
  it("maps TrustGraph's class:topicspace:topic form as its Pulsar backend does", () => {
    expect(parseTopic('request:tg:config')).toMatchObject({ full: 'non-persistent://tg/request/config' });
    expect(parseTopic('flow:tg:document-load')).toMatchObject({ full: 'persistent://tg/flow/document-load' });
  });

  it("keeps the colons of a 2.x flow queue's topic (text-completion:<workspace>:<flow>)", () => {
    expect(parseTopic('request:tg:text-completion:default:default')).toEqual({
      persistence: 'non-persistent',
      tenant: 'tg',
      namespace: 'request',
      local: 'text-completion:default:default',
      full: 'non-persistent://tg/request/text-completion:default:default',
    });
  });

  it('explains a name in neither form', () => {
    expect(parseTopic('text-completion')).toMatchObject({ error: expect.stringMatching(/^malformed topic "text-completion"/) });
  });
});
