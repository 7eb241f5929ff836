export const id = 'reload';
export const cellIds = [];
export async function run() {}
