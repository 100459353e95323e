// Colliding tags at every level, to pin which one wins on a request's samples: the
// result's (model) < the VU's (scenario tags) < the client's < the call's. tags_test.go
// runs the same scenario in Go.
import { check } from 'k6';
import storm from 'k6/x/tokenstorm';

export const options = {
  scenarios: {
    load: {
      executor: 'shared-iterations', vus: 1, iterations: 2,
      tags: { team: 'scenario', tier: 'scenario' },
    },
  },
  thresholds: {
    'llm_reqs{model:alias,team:scenario,tier:client,who:call,call:yes,scenario:load,group:}': ['count==2'],
    'iterations{team:scenario,tier:scenario,scenario:load}': ['count==2'],
    'checks{check:ok,team:scenario,tier:scenario,scenario:load}': ['rate==1'],
  },
};

const client = new storm.Client({
  url: __ENV.LLM_URL, model: 'mock-model',
  tags: { tier: 'client', model: 'alias', who: 'client' },
});

export default function () {
  const r = client.chat({
    messages: [{ role: 'user', content: 'hello' }], max_tokens: 4,
    tags: { who: 'call', call: 'yes' },
  });
  check(r, { ok: (r) => r.ok });
}
