/**
 * A local stand-in for an RFC 3161 time-stamping authority, built with pkijs: a self-signed RSA
 * certificate made at start (node's webcrypto), and a POST endpoint that reads a TimeStampReq
 * (application/timestamp-query) and answers a granted TimeStampResp whose token (SignedData over a
 * TSTInfo: the request's message imprint, a new serial number, the time now) carries the certificate.
 * `failWith(status)` makes it answer that HTTP status instead, as an authority that is down.
 */
import { webcrypto } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

const SIGNATURE = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const COMMON_NAME = '2.5.4.3';

export interface TimestampAuthority {
  url: string;
  /** The subject (common name) of its certificate. */
  signer: string;
  /** The content types of the requests it was sent. */
  requests: string[];
  failWith(status: number | undefined): void;
  close(): Promise<void>;
}

async function selfSignedCertificate(signer: string) {
  const keys = (await webcrypto.subtle.generateKey({ ...SIGNATURE, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const certificate = new pkijs.Certificate();
  certificate.version = 2;
  certificate.serialNumber = new asn1js.Integer({ value: 1 });
  const name = [new pkijs.AttributeTypeAndValue({ type: COMMON_NAME, value: new asn1js.Utf8String({ value: signer }) })];
  certificate.issuer.typesAndValues = name;
  certificate.subject.typesAndValues = name;
  certificate.notBefore.value = new Date(Date.now() - 60_000);
  certificate.notAfter.value = new Date(Date.now() + 24 * 3600_000);
  await certificate.subjectPublicKeyInfo.importKey(keys.publicKey);
  await certificate.sign(keys.privateKey, 'SHA-256');
  return { certificate, privateKey: keys.privateKey };
}

async function readAll(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

export async function startTimestampAuthority(signer = 'Afterimage test TSA'): Promise<TimestampAuthority> {
  const { certificate, privateKey } = await selfSignedCertificate(signer);
  let serial = 0;
  let failure: number | undefined;
  const requests: string[] = [];

  async function stamp(query: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
    const request = pkijs.TimeStampReq.fromBER(query);
    const info = new pkijs.TSTInfo({
      version: 1,
      policy: '1.3.6.1.4.1.99999.1',
      messageImprint: request.messageImprint,
      serialNumber: new asn1js.Integer({ value: ++serial }),
      genTime: new Date(),
      ...(request.nonce ? { nonce: request.nonce } : {}),
    });
    const signed = new pkijs.SignedData({
      version: 3,
      encapContentInfo: new pkijs.EncapsulatedContentInfo({
        eContentType: pkijs.id_eContentType_TSTInfo,
        eContent: new asn1js.OctetString({ valueHex: info.toSchema().toBER() }),
      }),
      signerInfos: [
        new pkijs.SignerInfo({
          version: 1,
          sid: new pkijs.IssuerAndSerialNumber({ issuer: certificate.issuer, serialNumber: certificate.serialNumber }),
        }),
      ],
      certificates: [certificate],
    });
    await signed.sign(privateKey, 0, 'SHA-256');
    const answer = new pkijs.TimeStampResp({
      status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.granted }),
      timeStampToken: new pkijs.ContentInfo({ contentType: pkijs.id_ContentType_SignedData, content: signed.toSchema(true) }),
    });
    return new Uint8Array(answer.toSchema().toBER());
  }

  const server = createServer(async (req, res) => {
    requests.push(String(req.headers['content-type']));
    const query = await readAll(req);
    if (failure) return void res.writeHead(failure).end('down');
    try {
      res.writeHead(200, { 'Content-Type': 'application/timestamp-reply' }).end(await stamp(query));
    } catch (error) {
      res.writeHead(400).end((error as Error).message);
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsr`,
    signer,
    requests,
    failWith(status) {
      failure = status;
    },
    close: () => new Promise((done) => server.close(() => done())),
  };
}
