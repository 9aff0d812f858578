/**
 * RFC 3161 timestamps of evidence bundles: the manifest's SHA-256 sent to TIMESTAMP_AUTHORITY_URL as a
 * TimeStampReq, its TimeStampResp kept as timestamp.tsr (what `openssl ts -reply` writes and `openssl ts
 * -verify` reads), and the offline check of such a token: its message imprint is the manifest's SHA-256
 * and its signature verifies against the certificate it carries. Which authority that certificate is
 * the reader decides (it says so, by subject); the check proves the token was signed by it, unchanged.
 */
import type { Certificate, SignedData, SignedDataVerifyError, TSTInfo } from 'pkijs';
import { outboundPost } from '../sources/outboundRequest.ts';

export const TIMESTAMP_TOKEN = 'timestamp.tsr';
/** A copy on its own ArrayBuffer, as webcrypto and pkijs take bytes. */
const own = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);
const SHA256_OID = '2.16.840.1.101.3.4.2.1';
const COMMON_NAME_OID = '2.5.4.3';
/** An authority has this long to answer; an export waits no longer and goes out without a token. */
const AUTHORITY_TIMEOUT_MS = 10_000;
/** A token is a few kilobytes with its certificates; an answer larger than this is no token. */
const TOKEN_MAX_BYTES = 1024 * 1024;
/** pkijs (with asn1js), loaded at the first timestamp asked for or checked: most processes handle none. */
const loadPkijs = () => import('pkijs');

/** The TimeStampReq (DER) of `manifest`: its SHA-256, asking for the signer's certificate in the token. */
async function timestampQuery(manifest: Uint8Array): Promise<Uint8Array> {
  const pkijs = await loadPkijs();
  const query = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: await pkijs.MessageImprint.create('SHA-256', own(manifest)),
    certReq: true,
  });
  return new Uint8Array(query.toSchema().toBER());
}

/**
 * Asks the authority at `url` to timestamp `manifest` (outboundPost): to that one configured URL only (no
 * redirect followed), within a time limit, the answer read up to a cap. Returns
 * the TimeStampResp when it grants a token that checks against the manifest, else throws why not.
 */
export async function requestTimestamp(url: string, manifest: Uint8Array): Promise<Timestamp> {
  // The operator's own authority: any address may be asked.
  const { status, body } = await outboundPost(new URL(url), {
    headers: { 'Content-Type': 'application/timestamp-query' },
    body: await timestampQuery(manifest),
    signal: AbortSignal.timeout(AUTHORITY_TIMEOUT_MS),
    maxBytes: TOKEN_MAX_BYTES,
  });
  if (status !== 200) throw new Error(`it answered HTTP ${status}`);
  if (!body) throw new Error(`its answer is larger than ${TOKEN_MAX_BYTES} bytes, or was cut off`);
  const checked = await checkTimestamp(body, manifest);
  if (!checked.ok) throw new Error(`its answer ${checked.problem}`);
  return { token: body, attestedAt: checked.attestedAt, signer: checked.signer };
}

/** What a valid token attests: when, and who signed it (the subject of the certificate it carries). */
export interface Attestation {
  attestedAt: Date;
  signer: string;
}
export type Timestamp = Attestation & { token: Uint8Array };
type TimestampCheck = ({ ok: true } & Attestation) | { ok: false; problem: string };

const hex = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString('hex');

/** The subject's common name of a certificate, else its whole subject as OID=value pairs. */
function subjectOf(certificate: Certificate): string {
  const names = certificate.subject.typesAndValues;
  const common = names.find((name) => name.type === COMMON_NAME_OID);
  return String(common?.value.valueBlock.value ?? names.map((name) => `${name.type}=${String(name.value.valueBlock.value)}`).join(', '));
}

/** Reads a TimeStampResp (DER) and checks it attests `manifest`: the imprint, then the signature against the certificate it carries. */
export async function checkTimestamp(tsr: Uint8Array, manifest: Uint8Array): Promise<TimestampCheck> {
  const pkijs = await loadPkijs();
  let signed: SignedData;
  let info: TSTInfo;
  try {
    const answer = pkijs.TimeStampResp.fromBER(own(tsr));
    if (answer.status.status > 1 || !answer.timeStampToken)
      return { ok: false, problem: `grants no token (PKIStatus ${answer.status.status})` };
    signed = new pkijs.SignedData({ schema: answer.timeStampToken.content });
    if (signed.encapContentInfo.eContentType !== pkijs.id_eContentType_TSTInfo || !signed.encapContentInfo.eContent)
      return { ok: false, problem: 'holds no TSTInfo' };
    info = pkijs.TSTInfo.fromBER(signed.encapContentInfo.eContent.getValue());
  } catch (error) {
    return { ok: false, problem: `is not an RFC 3161 time-stamp response (${(error as Error).message})` };
  }
  const imprint = info.messageImprint;
  if (imprint.hashAlgorithm.algorithmId !== SHA256_OID) return { ok: false, problem: 'does not timestamp a SHA-256' };
  const expected = await pkijs.getCrypto(true).digest({ name: 'SHA-256' }, own(manifest));
  if (hex(imprint.hashedMessage.valueBlock.valueHexView) !== hex(expected))
    return { ok: false, problem: 'timestamps another hash than the SHA-256 of manifest.json' };
  const verified = await signed
    .verify({ signer: 0, data: own(manifest).buffer, checkChain: false, extendedMode: true })
    .catch((error: SignedDataVerifyError | Error) => ('signatureVerified' in error ? error : null));
  if (!verified?.signatureVerified || !verified.signerCertificate)
    return { ok: false, problem: 'has a signature that does not verify against the certificate in it' };
  return { ok: true, attestedAt: info.genTime, signer: subjectOf(verified.signerCertificate) };
}
