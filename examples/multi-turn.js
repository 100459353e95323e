// Multi-turn conversations: each iteration holds one conversation, sending the history
// with every turn, and tags each request with its turn so thresholds and the summary can
// tell turns apart (later turns have longer prompts).
//
//   go run ./cmd/tokenstorm run examples/multi-turn.js
import { check } from 'k6';
import storm from 'k6/x/tokenstorm';

const TURNS = 3;

export const options = {
  vus: 2,
  iterations: 6,
  thresholds: {
    llm_req_failed: ['rate<0.01'],
    'llm_ttft{turn:1}': ['p(95)<500'],
    'llm_ttft{turn:3}': ['p(95)<500'],
  },
};

const url = storm.mock({ ttft: '15ms', prefillPerToken: '200us', itl: '3ms', seed: 4 });
const client = new storm.Client({ url, model: 'mock-model' });

const questions = [
  'Name a city on a river.',
  'What is the river called?',
  'Which sea does it flow into?',
];

export default function () {
  /** @type {import('k6/x/tokenstorm').Message[]} */
  const messages = [{ role: 'system', content: 'Answer briefly.' }];
  for (let turn = 1; turn <= TURNS; turn++) {
    messages.push({ role: 'user', content: questions[turn - 1] });
    const r = client.chat({ messages, max_tokens: 24, tags: { turn: String(turn) } });
    if (!check(r, { 'turn ok': (r) => r.ok })) {
      return; // the conversation cannot go on without the answer
    }
    messages.push({ role: 'assistant', content: r.text });
  }
}
