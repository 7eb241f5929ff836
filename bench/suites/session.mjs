export const id = 'session';
export const cellIds = [];
export async function run() {}
