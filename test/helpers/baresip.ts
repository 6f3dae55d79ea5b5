// The far phone of the SIP tests is the lab's softphone runner.
export { startBaresip, type Baresip, type BaresipEvent } from '../../src/lab/baresip.ts';
