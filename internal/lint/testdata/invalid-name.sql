-- Names that are not GraphQL names: the table and the column are left out.
create table public."order-items" (id serial primary key, quantity int);
create table public.items (id serial primary key, "first name" text, price numeric);
