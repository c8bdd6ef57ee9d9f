# Остаток собственной квоты на панели использования страницы токенов.

my-allowance-title = Остаток вашей квоты
my-allowance-intro = Считается по фиксированным периодам в UTC: минута, день, месяц. Выполняющийся запрос резервирует максимум, который может израсходовать, до своего завершения.
my-allowance-mine = Ваши лимиты (все ваши токены вместе)
my-allowance-token = Собственные лимиты токена «{ $name }»
my-allowance-unlimited = Без лимитов: вы можете использовать сколько угодно.
my-allowance-limit = Лимит
my-allowance-used = Израсходовано
my-allowance-remaining = Осталось
my-allowance-resets = Сбрасывается в
my-allowance-of = { $used } из { $limit }
my-allowance-held = зарезервировано выполняющимися запросами: { $amount }
my-allowance-unknown = сейчас неизвестно
