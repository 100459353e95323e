// Declares llm_ttft with another type than the tokenstorm module's Trend.
import { Counter } from 'k6/metrics';
export const ttft = new Counter('llm_ttft');
