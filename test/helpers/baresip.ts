// The far phone of the SIP tests is the lab's softphone runner.
export { startBaresip, type Baresip } from '../../src/lab/baresip.ts';
