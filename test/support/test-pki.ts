/** The private CA of a test run lives in bench/ now, where the cluster drill makes one too. */
export { makeTestPki, type PemFiles, type TestPki } from '../../bench/test-pki.js';
