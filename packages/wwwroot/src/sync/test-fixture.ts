/** `Authorization` header value as sync clients send it: `Basic base64("<token>:")`. */
export const basicAuth = (token: string) => `Basic ${Buffer.from(`${token}:`).toString('base64')}`;

/** `POST /wwwroot/api/sync/upload` with the three fields and a file, as forbes sends it. */
export function syncUpload(
  url: string,
  token: string,
  fields: { moduleName: string; changeType: string; filePath: string },
  content: string,
): Promise<Response> {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  data.append('file', new Blob([content]), 'upload.bin');
  return fetch(`${url}/wwwroot/api/sync/upload`, {
    method: 'POST',
    body: data,
    headers: { Authorization: basicAuth(token) },
  });
}
