/** A page of a list, as every list route answers it. */
interface Page<T> {
  data: T[];
  totalElements: number;
}

/** Lists can be long; past this many items the user types what they want instead (a guard, not a limit the API has). */
export const MAX_ITEMS = 5000;
const SIZE = 100; // the API's largest page

/** Every item of a list, page by page (at most MAX_ITEMS), for pickers that must offer them all. */
export async function allItems<T>(fetchPage: (page: number, size: number) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  for (let page = 0; items.length < MAX_ITEMS; page++) {
    const { data, totalElements } = await fetchPage(page, SIZE);
    items.push(...data);
    if (data.length < SIZE || items.length >= totalElements) break;
  }
  return items;
}
