// The cells of the benchmark: what each server is asked for, the answer expected, and the goals
// for our host (ratios to the Node ceiling and to the best of the Node static-file peers).
export const PEERS = ['express', 'sirv', 'fastify'];

const exact = '/Mixed/CaseFile.txt';

export const CELLS = [
  { id: '1k', label: '1 KiB file', path: () => '/1k.txt', status: 200, ceiling: 0.8, peers: 3 },
  { id: '16k', label: '16 KiB file', path: () => '/16k.txt', status: 200, peers: 3 },
  {
    id: '304',
    label: '304 (If-None-Match)',
    path: () => '/1k.txt',
    status: 304,
    ceiling: 0.8,
    peers: 3,
    headers: async (url) => {
      const res = await fetch(url);
      await res.arrayBuffer();
      return { 'If-None-Match': res.headers.get('etag') };
    },
  },
  // Peers have no case-insensitive lookup: they are asked for the exact name.
  {
    id: 'ci',
    label: 'case-insensitive hit',
    path: (s) => (s.startsWith('ack') ? '/mIXED/casefile.TXT' : exact),
    status: 200,
    ceiling: 0.7,
    peers: 3,
  },
  { id: 'shared', label: 'shared file', path: () => '/shared/theme.css', status: 200, ceiling: 0.8, peers: 3 },
  { id: 'manifest', label: 'manifest', path: () => '/shared-files/manifest', status: 200, peers: 3 },
  { id: 'miss', label: 'miss (404)', path: () => '/no-such-file.txt', status: 404, ceiling: 0.7, peers: 3 },
  { id: '4m', label: '4 MiB file (MB/s)', path: () => '/4m.bin', status: 200, throughput: true, peers: 1 },
  { id: 'tree', label: '5,000-file tree', script: 'tree', path: () => '/tree/d0/f0.txt', status: 200 },
  {
    id: 'screen',
    label: 'screen assets, br/gzip',
    script: 'screen',
    path: () => '/screen/app.js',
    status: 200,
    headers: async () => ({ 'Accept-Encoding': 'br, gzip' }),
  },
];
